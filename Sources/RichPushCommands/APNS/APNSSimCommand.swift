import ArgumentParser
import Foundation
import Hiredis
import Logging
import RichPushAPNS
import RichPushAPNSSim
import RichPushAdapters
import RichPushCore
import RichPushSimTLS
import ServiceLifecycle

/// `richpush apns-sim`: a local APNs for tests, demos and load tests.
struct APNSSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sim",
        abstract: "A local APNs: HTTP/2 over TLS, Apple's checks and answers; accepted pushes go on to the simulated devices.",
        discussion: """
            It makes a CA and a certificate for localhost/127.0.0.1 and writes them into --cert-dir; give \
            workers --apns-ca-file <dir>/ca.pem. It checks provider tokens against the public half of \
            --key-file (the same .p8 the workers sign with). Accepted pushes are published to the \
            simulated hub's device channels (<hub-prefix>:device:<token>), so `richpush device-sim \
            --apns-tokens` receives them. --log-requests prints one JSON line per request.
            """)

    @OptionGroup var redis: RedisOptions
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (Apple's are 443 and 2197; 0 picks a free one).") var port = 2197
    @Option(help: "The team id tokens must name.") var teamID: String
    @Option(help: "The key id tokens must name.") var keyID: String
    @Option(help: "The .p8 key the workers sign with; only its public half is used.") var keyFile: String
    @Option(help: "A bundle id the team may push to (repeat for more).") var topic: [String] = []
    @Option(help: "Concurrent streams per connection after a valid token (1 before, as Apple).") var maxStreams = 1000
    @Option(help: "Directory for ca.pem, cert.pem and key.pem.") var certDir = ".richpush-apns-sim"
    @Option(help: "Another DNS name the certificate is for, besides localhost (repeat for more; e.g. a compose service name).")
    var certHost: [String] = []
    @Option(help: "Key prefix of the simulated hub (the workers' queue prefix).") var hubPrefix = "richpush"
    @Option(
        help:
            "Inject Apple's error answers into accepted pushes: STATUS:PERCENT%,… (400 and 410 stick to a device token; 403, 413, 429, 500, 503 are drawn per request), e.g. \"410:5%,429:2%,500:1%\"."
    )
    var fail: String?
    @Option(help: "Hold each answer back N or MIN-MAX milliseconds.") var delayMs: String?
    @Option(help: "Send GOAWAY after every N answers on a connection, then close it.") var goawayEvery: Int?
    @Option(help: "Seed of the fault choices.") var seed: UInt64 = 1
    @Option(
        help:
            "The sender held mid-run, once: after N pushes, 429 TooManyRequests with Retry-After to every push for S seconds (AFTER:SECONDS, e.g. 100:20)."
    )
    var outage: String?
    @Option(help: "Apple's timestamp on 410 answers, ms since 1970 (default: the moment of the answer).") var unregisteredAt: Int64?
    @Option(
        help:
            "A device token of Apple's other service (a sandbox token when this simulator stands in for production, and the reverse): answered 400 BadDeviceToken, as Apple answers a token sent to the wrong service (repeat for more)."
    )
    var otherEnvironmentToken: [String] = []
    @Flag(help: "Serve cleartext HTTP/2 (prior knowledge) instead of TLS, for clients started with --apns-cleartext.") var cleartext = false
    @Flag(help: "Do not pass accepted pushes on to the simulated devices.") var noForward = false
    @Flag(help: "Print one JSON line per request.") var logRequests = false
    @Flag(
        help:
            "With --log-requests, each line also carries the request's device token and payload (for tests; payloads may hold personal data)."
    )
    var logPayloads = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard !topic.isEmpty else { throw ValidationError("give at least one --topic (the app's bundle id)") }
        guard (1...100_000).contains(maxStreams) else { throw ValidationError("--max-streams must be 1 to 100000") }
        guard goawayEvery.map({ $0 > 0 }) ?? true else { throw ValidationError("--goaway-every must be positive") }
        for host in certHost where !LocalCertificates.isDNSName(host) {
            throw ValidationError("--cert-host '\(host)' is not a DNS name (letters, digits, '-' and '.')")
        }
        _ = try faultPlan()
    }

    func faultPlan() throws -> APNSFaultPlan {
        var plan = APNSFaultPlan()
        do {
            if let fail { plan.failures = try APNSFaultPlan.failures(parsing: fail) }
            if let delayMs { plan.delayMilliseconds = try APNSFaultPlan.delay(parsing: delayMs) }
        } catch {
            throw ValidationError(error.description)
        }
        plan.goAwayEvery = goawayEvery
        plan.seed = seed
        plan.unregisteredAt = unregisteredAt
        if let outage {
            guard let parsed = SimulatedOutage(parsing: outage) else {
                throw ValidationError("--outage must be AFTER:SECONDS (e.g. 100:20, 1 to 3600 seconds), not '\(outage)'")
            }
            plan.outage = parsed
        }
        return plan
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        var logger = Logger(label: "richpush.apns-sim")
        logger.logLevel = .warning
        let pem: String
        do { pem = try String(contentsOfFile: keyFile, encoding: .utf8) } catch { throw CLIError("cannot read --key-file \(keyFile)") }
        let signer: APNSSigningKey
        do { signer = try APNSSigningKey(pem: pem, keyID: keyID, teamID: teamID) } catch { throw CLIError("\(error)") }
        let rules = APNSServerRules(
            token: APNSProviderTokenCheck(teamID: teamID, keys: [keyID: signer.publicKey]), topics: Set(topic),
            otherEnvironmentTokens: Set(otherEnvironmentToken))
        let certificates = try LocalCertificates.generate(hosts: ["localhost"] + certHost)
        try certificates.write(to: URL(fileURLWithPath: certDir))
        let pool = RedisConnectionPool(configuration: try redis.configuration(clientName: "richpush-apns-sim"), size: 2, logger: logger)
        let (deliver, made) = HubForwarder.make(hub: SimulatedHubAdapter(redis: pool, prefix: hubPrefix), logger: logger)
        var forwarder = made
        var log: APNSSimulatorServer.RequestLog?
        if logRequests { log = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) } }
        var forward: APNSSimulatorServer.Forward?
        if !noForward { forward = { push in deliver(Self.outgoing(push)) } }
        let server = try await APNSSimulatorServer.start(
            host: host, port: port, certificates: certificates, rules: rules, maxStreams: maxStreams,
            faults: try faultPlan(), cleartext: cleartext, log: log, logPayloads: logPayloads, forward: forward)
        FileHandle.standardError.write(
            Data(
                "apns-sim: listening on \(cleartext ? "http" : "https")://\(host):\(server.port)\(cleartext ? " (cleartext HTTP/2)" : " (trust \(certDir)/ca.pem)")\n"
                    .utf8))
        forwarder.onShutdown = { try await server.stop() }
        let services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: pool), .init(service: forwarder)]
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

extension APNSSimCommand {
    /// An accepted push as the hub carries it to the device.
    static func outgoing(_ push: APNSSimulatorServer.AcceptedPush) -> OutgoingPush {
        OutgoingPush(
            notification: 0,
            installation: Installation(id: push.deviceToken, platform: .apns, handle: push.deviceToken, tags: [], owner: "", updatedAt: 0),
            rendered: RenderedPush(
                payload: push.payload, pushType: push.headers["apns-push-type"] ?? "alert",
                priority: Int(push.headers["apns-priority"] ?? "10") ?? 10,
                expiration: Int(push.headers["apns-expiration"] ?? "0") ?? 0,
                collapseID: push.headers["apns-collapse-id"] ?? push.apnsID))
    }
}
