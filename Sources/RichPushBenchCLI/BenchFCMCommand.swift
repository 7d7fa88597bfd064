import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hiredis
import Logging
import NIOSSL
import RichPushCommands
import RichPushCore
import RichPushFCM
import RichPushFCMSim
import RichPushHTTP2
import RichPushSimTLS
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// `richpush bench fcm`: messages per second through ``FCMPushAdapter`` to `fcm-sim` on loopback
/// over HTTP/2 and TLS: a running one (`--url`, its service account and CA; scripts/bench-fcm.sh
/// starts it), or one in this process. Reports this process's CPU per message (the adapter's,
/// when the simulator runs apart).
struct BenchFCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fcm", abstract: "Measure the FCM adapter against an in-process fcm-sim.")

    @OptionGroup var redis: RedisOptions
    @Option(help: "Messages to send.") var messages = 20_000
    @Option(help: "Messages per adapter call (a worker's batch).") var batch = 1000
    @Option(help: "Loopback port for the in-process fcm-sim.") var port = 18095
    @Option(help: "HTTP/2 connections to the simulator.") var connections = 2
    @Option(help: "A running fcm-sim's URL (https://127.0.0.1:PORT) instead of one in this process.") var url: String?
    @Option(help: "With --url: the service-account JSON the simulator accepts.") var serviceAccount: String?
    @Option(help: "With --url: the simulator's ca.pem.") var caFile: String?

    func validate() throws {
        guard messages > 0, batch > 0, (1...64).contains(connections) else {
            throw ValidationError("--messages and --batch must be positive, --connections 1 to 64")
        }
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535") }
        guard url == nil || serviceAccount != nil else { throw ValidationError("--url needs --service-account") }
    }

    func run() async throws {
        let (baseURL, trustRoots, account, stopServer) = if let url { try external(url) } else { try await inProcess() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(trustRoots)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let client = try HTTP2Client(
            configuration: HTTP2Client.Configuration(
                endpoint: try HTTP2Client.Endpoint(url: baseURL), trustRoots: trustRoots,
                connections: connections))
        let connection = try await RedisConnection.connect(configuration: try redis.configuration(clientName: "richpush-bench"))
        let adapter = FCMPushAdapter(
            client: client, projectID: account.projectID,
            token: FCMAccessToken(redis: connection, prefix: "bench:\(UUID().uuidString.prefix(6))", account: account, http: http))
        func makeBatch(_ start: Int, _ count: Int) throws -> [OutgoingPush] {
            try (start..<start + count).map { index in
                let notification = RichNotification(
                    id: index, message: "bench", richType: .image, contentType: "image/png", payloadHash: "h",
                    payloadSize: 1, creator: "b", target: "t", createdAt: 0)
                return OutgoingPush(
                    notification: index,
                    installation: Installation(
                        id: "a\(index)", platform: .fcm, handle: "fcm-\(index)", tags: [],
                        owner: "b", updatedAt: 0),
                    rendered: try PushRenderer().renderFCM(notification, collapseID: String(index)))
            }
        }
        _ = try await adapter.send(try makeBatch(0, min(batch, 100)))  // warm up: token, connections
        var timings = BatchTimings()
        let me = ProcessProbe(name: "bench", pid: getpid())
        let cpuBefore = me.read()?.cpuSeconds ?? 0
        var sent = 0
        var failed = 0
        let clock = ContinuousClock()
        let start = clock.now
        while sent < messages {
            let count = min(batch, messages - sent)
            let pushes = try makeBatch(sent, count)
            let began = clock.now
            let outcomes = try await adapter.send(pushes)
            timings.record(clock.now - began)
            failed += outcomes.filter { if case .sent = $0 { false } else { true } }.count
            sent += count
        }
        let seconds = (clock.now - start).seconds
        let cpuMicros = ((me.read()?.cpuSeconds ?? 0) - cpuBefore) * 1_000_000 / Double(sent)
        let (p50, p99) = timings.percentiles
        let rss = BatchTimings.peakRSS
        let setup = url == nil ? "adapter and fcm-sim in one process" : "fcm-sim in its own process"
        print(
            String(
                format:
                    "%d messages in %.2f s: %.0f messages/s; batch of %d: p50 %.1f ms, p99 %.1f ms; not sent %d; CPU %.1f µs per message; peak RSS %@ (%@)",
                sent, seconds, Double(sent) / seconds, batch, p50, p99, failed, cpuMicros, rss, setup))
        await connection.close()
        client.shutdown()
        try await http.shutdown()
        await stopServer()
    }

    typealias Setup = (baseURL: String, trustRoots: [NIOSSLCertificate], account: FCMServiceAccount, stop: @Sendable () async -> Void)

    /// A running fcm-sim, with the service account it accepts and its CA.
    private func external(_ url: String) throws -> Setup {
        let account = try FCMServiceAccount(json: Array(try Data(contentsOf: URL(fileURLWithPath: serviceAccount ?? ""))))
        return (url, try caFile.map { try NIOSSLCertificate.fromPEMFile($0) } ?? [], account, {})
    }

    /// An fcm-sim in this process on `--port`, with a service account made for the run.
    private func inProcess() async throws -> Setup {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let port = port
        let certificates = try LocalCertificates.generate()
        let accountJSON: [String: Any] = [
            "type": "service_account", "project_id": "richpush-bench", "private_key_id": "bench",
            "private_key": key.pkcs8PEMRepresentation, "client_email": "bench@richpush-bench.iam.gserviceaccount.com",
            "token_uri": "https://127.0.0.1:\(port)/token",
        ]
        let account = try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: accountJSON)))
        var configuration = FCMSimulator.Configuration(
            projectID: account.projectID,
            check: try FCMAssertionCheck(
                clientEmail: account.clientEmail, keyID: "bench", publicKeyPEM: account.publicKeyPEM, audiences: [account.tokenURI]))
        // The bench measures the adapter, not FCM's default 10,000/s project quota.
        configuration.quota.projectPerMinute = .max / 2
        let simulator = FCMSimulator(configuration: configuration)
        let server = try await simulator.start(port: port, tls: try certificates.serverTLS(applicationProtocols: ["h2"]))
        return (
            "https://127.0.0.1:\(port)", try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)), account,
            {
                try? await server.stop()
            }
        )
    }
}
