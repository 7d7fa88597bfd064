import ArgumentParser
import Foundation
import Logging
import NIOSSL
import RichPushSimTLS
import RichPushWebPushSim
import ServiceLifecycle

/// `richpush webpush-sim`: a local Web Push service (RFC 8030) for tests, demos and load tests.
struct WebPushSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush-sim",
        abstract: "A local Web Push service (RFC 8030) that refuses what RFC 8030, 8291 and 8292 refuse.",
        discussion: """
            Browsers' stand-in: POST /subscribe (optionally {"applicationServerKey": "<base64url>"}) \
            answers 201 with an endpoint https://host:port/push/<id> and a WebSocket URL \
            (/subscription/<id>/ws) where the subscriber receives its messages as JSON text frames; \
            DELETE /subscription/<id> expires it (later pushes: 410). POST /push/<id> checks TTL, \
            Urgency, Topic, Content-Encoding aes128gcm and its header, the 4,096-byte limit and the \
            VAPID JWT (ES256 by k, aud this origin, exp within 24 h, sub mailto: or https:, k the \
            subscription's applicationServerKey), answering as push services do (400, 401, 403, 404, \
            410, 413) with autopush's JSON error body, and 201 with Location otherwise. A message for \
            an offline subscriber waits until its TTL (a newer one with the same Topic replaces it). \
            It speaks HTTP/2 and HTTP/1.1 over TLS with a CA it makes and writes into --cert-dir \
            (senders trust ca.pem), or cleartext HTTP/1.1 with --cleartext. See docs/webpush.md.
            """)

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port (0 picks a free one).") var port = 8097
    @Option(
        help:
            "The host name senders reach this service by: in endpoints, and the origin VAPID's aud must name (default: --host, or 127.0.0.1 for 0.0.0.0)."
    )
    var publicHost: String?
    @Option(
        help:
            "Failures of valid pushes: STATUS:PERCENT%,… with STATUS 410 (the subscription is gone, fixed per subscription by the seed), 429 or 503 (drawn per request, with Retry-After), e.g. \"410:5%,429:2%,503:1%\"."
    )
    var fail: String?
    @Option(help: "Hold each push answer back N or MIN-MAX milliseconds.") var delayMs: String?
    @Option(help: "Seed of the fault choices.") var seed: UInt64 = 1
    @Option(
        help: """
            Messages one subscription may get per clock minute; past that, 429 with Retry-After until the next minute (0: no limit). \
            A request to a subscription inside any Retry-After it was given is refused again and logged as inside_retry_after.
            """) var subscriptionRate = 0
    @Flag(help: "Print one JSON line per request and per message delivered.") var logRequests = false
    @Option(help: "Directory for ca.pem, cert.pem and key.pem (senders trust ca.pem).") var certDir = ".richpush-webpush-sim"
    @Option(help: "Another DNS name the certificate is for, besides localhost (repeat for more; e.g. a compose service name).")
    var certHost: [String] = []
    @Flag(help: "Serve cleartext HTTP/1.1 (and ws://) instead of TLS, for curl and debugging.") var cleartext = false
    @Flag(
        help:
            "Serve HTTP/2 on the connection's frames, not through Hummingbird's HTTP/2 channel: a sixth of the CPU per push (what scripts/bench-webpush.sh runs)."
    )
    var http2Frames = false
    @Option(help: "Messages kept per subscription for an offline subscriber (past that the oldest is dropped).") var maxKept = 100
    @Option(help: "Messages kept in all (past that a push for an offline subscriber gets 503 with Retry-After).") var maxKeptTotal = 10_000
    @Option(help: "The longest TTL kept, in seconds (a longer one is cut, and the 201's TTL header says so).") var maxTtl = 2_592_000

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard (1...100_000).contains(maxKept) else { throw ValidationError("--max-kept must be 1 to 100000") }
        guard (1...10_000_000).contains(maxKeptTotal) else { throw ValidationError("--max-kept-total must be 1 to 10000000") }
        guard maxTtl >= 0 else { throw ValidationError("--max-ttl must be at least 0") }
        for host in certHost + (publicHost.map { [$0] } ?? []) where !LocalCertificates.isDNSName(host) {
            throw ValidationError("'\(host)' is not a DNS name (letters, digits, '-' and '.')")
        }
        _ = try failures()
        if let delayMs { _ = try FCMSimCommand.delay(delayMs) }
    }

    func failures() throws -> [(status: Int, share: Double)] {
        guard let fail else { return [] }
        var result: [(status: Int, share: Double)] = []
        for part in fail.split(separator: ",") {
            let pieces = part.split(separator: ":")
            guard pieces.count == 2, let status = Int(pieces[0]), [410, 429, 503].contains(status) else {
                throw ValidationError("--fail '\(part)': expected STATUS:PERCENT% with STATUS 410, 429 or 503")
            }
            result.append((status, try FCMSimCommand.percent(String(pieces[1]), "--fail")))
        }
        guard result.map(\.share).reduce(0, +) <= 1 else { throw ValidationError("--fail: the shares add up to more than 100%") }
        return result
    }

    func run() async throws {
        LogSetup.bootstrap(level: .warning)
        var logger = Logger(label: "richpush.webpush-sim")
        logger.logLevel = .warning
        var configuration = WebPushSimulator.Configuration()
        configuration.publicHost = publicHost
        let failures = try failures()
        configuration.gone = failures.filter { $0.status == 410 }.map(\.share).reduce(0, +)
        configuration.transient = failures.filter { $0.status != 410 }
        configuration.delayMilliseconds = try delayMs.map(FCMSimCommand.delay)
        configuration.seed = seed
        guard subscriptionRate >= 0 else { throw ValidationError("--subscription-rate must be 0 (no limit) or more") }
        configuration.subscriptionRatePerMinute = subscriptionRate
        configuration.keptPerSubscription = maxKept
        configuration.keptTotal = maxKeptTotal
        configuration.maxTTL = maxTtl
        configuration.http2Frames = http2Frames
        var log: WebPushSimulator.RequestLog?
        if logRequests { log = { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) } }
        let simulator = WebPushSimulator(configuration: configuration, log: log)
        var tls: TLSConfiguration?
        if !cleartext {
            let certificates = try LocalCertificates.generate(hosts: ["localhost"] + certHost + (publicHost.map { [$0] } ?? []))
            try certificates.write(to: URL(fileURLWithPath: certDir))
            tls = try certificates.serverTLS(applicationProtocols: ["h2", "http/1.1"])
        }
        let how = cleartext ? "cleartext HTTP/1.1" : "HTTP/2 and HTTP/1.1 over TLS, trust \(certDir)/ca.pem"
        let application = try simulator.application(host: host, port: port, tls: tls, logger: logger) { _ in
            FileHandle.standardError.write(Data("webpush-sim: listening on \(simulator.origin) (\(how); POST /subscribe)\n".utf8))
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: application)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
