import ArgumentParser
import Foundation
import Hiredis
import Logging
import NIOSSL
import RichPushAdapters
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushSimTLS
import ServiceLifecycle
import _CryptoExtras

/// `richpush fcm-sim`: a local FCM (Google's token endpoint and FCM HTTP v1) for tests, demos and
/// load tests.
struct FCMSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-sim",
        abstract: "A local FCM: Google's OAuth2 token endpoint and FCM HTTP v1 messages:send, with Google's checks and errors.",
        discussion: """
            It checks service-account assertions against the public half of --service-account (the same \
            JSON the workers use) and FCM messages against the v1 Message schema, and enforces the \
            project's rolling-minute quota and the per-device limit (429 QUOTA_EXCEEDED with Retry-After). \
            It speaks HTTP/2 over TLS with a CA it makes and writes into --cert-dir (give workers \
            --fcm-ca-file <dir>/ca.pem), or cleartext HTTP/1.1 with --cleartext. With --make-credentials \
            it first writes a new service account (an RSA key) whose token_uri is this simulator, for \
            workers to use with --fcm-credentials. Accepted messages are published to the simulated hub's \
            device channels (<hub-prefix>:device:<token>), so `richpush device-sim --platform fcm` \
            receives them; for an offline device the hub holds them as FCM does, for their android.ttl: \
            the newest per collapse_key, at most 4 keys (past that the oldest key is dropped), and up to \
            100 messages without one. --log-requests prints one JSON line per messages:send.
            """)

    @OptionGroup var redis: RedisOptions
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0 picks a free one).") var port = 8095
    @Option(help: "The service-account JSON whose assertions it accepts.") var serviceAccount: String
    @Flag(help: "Write a new service account to --service-account first (an existing file is kept).") var makeCredentials = false
    @Option(help: "The project id of a service account it makes.") var projectID = "richpush-local"
    @Option(
        help:
            "The host name workers reach this simulator by, for the token_uri of a service account it makes (default: --host, or 127.0.0.1 for 0.0.0.0)."
    )
    var publicHost: String?
    @Option(help: "Seconds the access tokens it issues live (expires_in).") var tokenLifetime = 3600
    @Option(help: "Share of registration tokens that are dead (404 UNREGISTERED), e.g. 5%.") var unregistered = "0%"
    @Option(
        help:
            "Failures of messages:send: STATUS:PERCENT%,… with STATUS 404 (UNREGISTERED, fixed per token, as --unregistered), 400, 429, 500 or 503 (drawn per request), e.g. \"404:5%,429:2%,503:1%\"."
    )
    var fail: String?
    @Option(help: "Hold each answer back N or MIN-MAX milliseconds.") var delayMs: String?
    @Option(help: "Seed of the fault choices.") var seed: UInt64 = 1
    @Flag(help: "Print one JSON line per messages:send.") var logRequests = false
    @Option(help: "Directory for ca.pem, cert.pem and key.pem (workers trust ca.pem with --fcm-ca-file).") var certDir = ".richpush-fcm-sim"
    @Option(help: "Another DNS name the certificate is for, besides localhost (repeat for more; e.g. a compose service name).")
    var certHost: [String] = []
    @Flag(
        help:
            "Serve cleartext HTTP/1.1 instead of HTTP/2 over TLS, for curl and debugging (workers speak HTTP/2 over TLS only, as Google's endpoints)."
    )
    var cleartext = false
    @Option(help: "Concurrent streams per HTTP/2 connection.") var maxStreams = 100
    @Option(help: "Requests the project may send in any rolling minute (FCM's default quota is 600000).") var projectQuota = 600_000
    @Option(
        help:
            "The project's quota used up mid-run, once: after N requests, 429 QUOTA_EXCEEDED with Retry-After to every request for S seconds (AFTER:SECONDS, e.g. 100:20)."
    )
    var quotaOutage: String?
    @Option(
        help:
            "On SIGUSR1, the project's quota runs out for this many seconds (429 QUOTA_EXCEEDED with Retry-After), each time: a fault for scripts/chaos.sh."
    )
    var quotaOutageOnSignal: Double?
    @Option(help: "Messages one device may get per minute (FCM's limit is 240).") var deviceQuota = 240
    @Option(help: "Key prefix of the simulated hub (the workers' queue prefix).") var hubPrefix = "richpush"
    @Flag(help: "Do not pass accepted messages on to the simulated devices.") var noForward = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard !makeCredentials || port != 0 else {
            throw ValidationError("--make-credentials writes this simulator's address into the file: give a fixed --port")
        }
        guard (60...86400).contains(tokenLifetime) else { throw ValidationError("--token-lifetime must be 60 to 86400 seconds") }
        guard (1...10_000).contains(maxStreams) else { throw ValidationError("--max-streams must be 1 to 10000") }
        guard projectQuota >= 1, deviceQuota >= 1 else { throw ValidationError("--project-quota and --device-quota must be at least 1") }
        if let quotaOutage, SimulatedOutage(parsing: quotaOutage) == nil {
            throw ValidationError("--quota-outage must be AFTER:SECONDS (e.g. 100:20, 1 to 3600 seconds), not '\(quotaOutage)'")
        }
        if let quotaOutageOnSignal, !(1...3600).contains(quotaOutageOnSignal) {
            throw ValidationError("--quota-outage-on-signal must be 1 to 3600 seconds")
        }
        if quotaOutage != nil && quotaOutageOnSignal != nil {
            throw ValidationError("--quota-outage and --quota-outage-on-signal exclude each other")
        }
        for host in certHost where !LocalCertificates.isDNSName(host) {
            throw ValidationError("--cert-host '\(host)' is not a DNS name (letters, digits, '-' and '.')")
        }
        _ = try Self.percent(unregistered, "--unregistered")
        _ = try transient()
        if let delayMs { _ = try Self.delay(delayMs) }
    }

    static func percent(_ text: String, _ option: String) throws -> Double {
        guard text.hasSuffix("%"), let value = Double(text.dropLast()), (0...100).contains(value) else {
            throw ValidationError("\(option) must be a percentage from 0% to 100%, not '\(text)'")
        }
        return value / 100
    }

    /// `N` or `MIN-MAX` milliseconds, 0 to 600,000.
    static func delay(_ text: String) throws -> ClosedRange<Int> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...2).contains(parts.count), let low = parts.first ?? nil, let high = parts.last ?? nil, 0 <= low, low <= high,
            high <= 600_000
        else {
            throw ValidationError("--delay-ms must be N or MIN-MAX milliseconds (0 to 600000), not '\(text)'")
        }
        return low...high
    }

    func transient() throws -> [(status: Int, share: Double)] {
        guard let fail else { return [] }
        var result: [(status: Int, share: Double)] = []
        for part in fail.split(separator: ",") {
            let pieces = part.split(separator: ":")
            guard pieces.count == 2, let status = Int(pieces[0]), [400, 404, 429, 500, 503].contains(status) else {
                throw ValidationError("--fail '\(part)': expected STATUS:PERCENT% with STATUS 400, 404, 429, 500 or 503")
            }
            result.append((status, try Self.percent(String(pieces[1]), "--fail")))
        }
        guard result.map(\.share).reduce(0, +) <= 1 else { throw ValidationError("--fail: the shares add up to more than 100%") }
        return result
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        var logger = Logger(label: "richpush.fcm-sim")
        logger.logLevel = .warning
        if makeCredentials && !FileManager.default.fileExists(atPath: serviceAccount) {
            try writeServiceAccount()
        }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: Array(try Data(contentsOf: URL(fileURLWithPath: serviceAccount))))
        } catch let error as FCMConfigurationError {
            throw CLIError("--service-account: \(error)")
        } catch {
            throw CLIError("cannot read --service-account \(serviceAccount)")
        }
        var configuration = FCMSimulator.Configuration(
            projectID: account.projectID,
            check: try FCMAssertionCheck(
                clientEmail: account.clientEmail, keyID: account.privateKeyID, publicKeyPEM: account.publicKeyPEM,
                audiences: [account.tokenURI, "https://oauth2.googleapis.com/token"]))
        configuration.tokenLifetime = .seconds(tokenLifetime)
        let failures = try transient()
        configuration.unregistered = min(
            1, try Self.percent(unregistered, "--unregistered") + failures.filter { $0.status == 404 }.map(\.share).reduce(0, +))
        configuration.transient = failures.filter { $0.status != 404 }
        configuration.delayMilliseconds = try delayMs.map(Self.delay)
        configuration.seed = seed
        configuration.quota = FCMQuota.Limits(projectPerMinute: projectQuota, devicePerMinute: deviceQuota)
        configuration.outage = quotaOutage.flatMap(SimulatedOutage.init(parsing:))
        // The signal's handler runs on a Dispatch queue, never on Swift's pool.
        var onSignal: (any DispatchSourceSignal)?
        if let quotaOutageOnSignal {
            let outage = SimulatedOutage(after: Int.max, seconds: quotaOutageOnSignal)
            configuration.outage = outage
            signal(SIGUSR1, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
            source.setEventHandler {
                outage.start(now: Date().timeIntervalSince1970)
                FileHandle.standardError.write(Data("fcm-sim: SIGUSR1: the project's quota is used up for \(quotaOutageOnSignal) s\n".utf8))
            }
            source.resume()
            onSignal = source
        }
        defer { onSignal?.cancel() }
        var log: FCMSimulator.RequestLog?
        if logRequests { log = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) } }
        let pool = RedisConnectionPool(configuration: try redis.configuration(clientName: "richpush-fcm-sim"), size: 2, logger: logger)
        let hub = SimulatedHubAdapter(redis: pool, prefix: hubPrefix)
        let summary = "project \(account.projectID), token endpoint /token"
        var services: [any Service] = [pool]
        let (deliver, made) = HubForwarder.make(hub: hub, logger: logger)
        var forwarder = made
        var forward: (@Sendable (FCMSimulator.Accepted) -> Void)?
        if !noForward { forward = { accepted in deliver(accepted.hubPush) } }
        let simulator = FCMSimulator(configuration: configuration, log: log, forward: forward)
        if cleartext {
            let host = host
            let application = simulator.application(host: host, port: port) { channel in
                FileHandle.standardError.write(
                    Data("fcm-sim: listening on http://\(host):\(channel.localAddress?.port ?? 0) (cleartext HTTP/1.1; \(summary))\n".utf8))
            }
            services.append(forwarder)
            services.append(application)
        } else {
            let certificates = try LocalCertificates.generate(hosts: ["localhost"] + certHost)
            try certificates.write(to: URL(fileURLWithPath: certDir))
            let server = try await simulator.start(
                host: host, port: port, tls: try certificates.serverTLS(applicationProtocols: ["h2"]), maxStreams: maxStreams)
            FileHandle.standardError.write(
                Data("fcm-sim: listening on https://\(host):\(server.port) (HTTP/2 over TLS, trust \(certDir)/ca.pem; \(summary))\n".utf8))
            forwarder.onShutdown = { try await server.stop() }
            services.append(forwarder)
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// A new service account like the Firebase console's, whose token endpoint is this simulator.
    private func writeServiceAccount() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let object: [String: Any] = [
            "type": "service_account", "project_id": projectID,
            "private_key_id": UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            "private_key": key.pkcs8PEMRepresentation, "client_email": "richpush@\(projectID).iam.gserviceaccount.com",
            "client_id": "100000000000000000000",
            "token_uri": "\(cleartext ? "http" : "https")://\(publicHost ?? (host == "0.0.0.0" ? "127.0.0.1" : host)):\(port)/token",
        ]
        let url = URL(fileURLWithPath: serviceAccount)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }
}
