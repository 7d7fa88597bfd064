import ArgumentParser
import Crypto
import Foundation
import Hiredis
import NIOSSL
import RichPushAPNS
import RichPushAPNSSim
import RichPushCommands
import RichPushCore
import RichPushHTTP2
import RichPushSimTLS

/// `richpush bench apns`: pushes per second through ``APNSPushAdapter`` to an in-process
/// `apns-sim` over TLS and HTTP/2 on loopback (client and server share this process and its cores).
struct BenchAPNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns", abstract: "Measure the APNs adapter against a local apns-sim over TLS.")

    @OptionGroup var redis: RedisOptions
    @Option(help: "Pushes to send.") var pushes = 100_000
    @Option(help: "Pushes per adapter call (a worker's batch).") var batch = 1000
    @Option(help: "The simulator's concurrent streams per connection.") var maxStreams = 500
    @Option(help: "HTTP/2 connections of the adapter.") var connections = 2
    @Option(help: "Requests of one batch in flight at once.") var concurrency = 1000
    @Option(help: "An apns-sim already running (https://host:port) instead of one in this process; needs --ca-file and --key-file.")
    var url: String?
    @Option(help: "The running apns-sim's ca.pem.") var caFile: String?
    @Option(help: "The .p8 key the running apns-sim checks tokens against (team BENCHTEAM1, key BENCHKEY01, topic com.example.bench).")
    var keyFile: String?

    func validate() throws {
        guard pushes > 0, batch > 0, maxStreams > 0, connections > 0, concurrency > 0 else {
            throw ValidationError("--pushes, --batch, --max-streams, --connections and --concurrency must be positive")
        }
        guard url == nil || (caFile != nil && keyFile != nil) else { throw ValidationError("--url needs --ca-file and --key-file") }
    }

    func run() async throws {
        let signer: APNSSigningKey
        let client: HTTP2Client
        var server: APNSSimulatorServer?
        if let url, let caFile, let keyFile {
            signer = try APNSSigningKey(
                pem: try String(contentsOfFile: keyFile, encoding: .utf8), keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
            client = try HTTP2Client(
                configuration: HTTP2Client.Configuration(
                    endpoint: try HTTP2Client.Endpoint(apns: url),
                    trustRoots: try NIOSSLCertificate.fromPEMFile(caFile), connections: connections))
        } else {
            let key = P256.Signing.PrivateKey()
            signer = try APNSSigningKey(pem: key.pemRepresentation, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
            let rules = APNSServerRules(
                token: APNSProviderTokenCheck(teamID: "BENCHTEAM1", keys: ["BENCHKEY01": key.publicKey]), topics: ["com.example.bench"])
            let certificates = try LocalCertificates.generate()
            let local = try await APNSSimulatorServer.start(certificates: certificates, rules: rules, maxStreams: maxStreams)
            server = local
            client = try HTTP2Client(
                configuration: HTTP2Client.Configuration(
                    endpoint: HTTP2Client.Endpoint(host: "localhost", port: local.port, usesTLS: true),
                    trustRoots: try NIOSSLCertificate.fromPEMBytes(Array(certificates.caPEM.utf8)), connections: connections))
        }
        let connection = try await RedisConnection.connect(configuration: try redis.configuration(clientName: "richpush-bench"))
        let token = APNSSharedToken(redis: connection, prefix: "bench:\(UUID().uuidString.prefix(6))", signer: signer)
        let adapter = APNSPushAdapter(client: client, topic: "com.example.bench", token: token, concurrency: concurrency)
        let payload = Array(#"{"aps":{"content-available":1},"richId":"1","richMessage":"bench","richType":"img"}"#.utf8)
        func makeBatch(_ start: Int, _ count: Int) -> [OutgoingPush] {
            (start..<start + count).map { index in
                let handle = String(format: "%064lx", index)
                return OutgoingPush(
                    notification: index,
                    installation: Installation(id: "i\(index)", platform: .apns, handle: handle, tags: [], owner: "b", updatedAt: 0),
                    rendered: RenderedPush(payload: payload, pushType: "background", priority: 5, expiration: 0, collapseID: String(index)))
            }
        }
        _ = try await adapter.send(makeBatch(0, min(batch, 100)))  // warm up: TLS, token, stream limit raised
        var timings = BatchTimings()
        var sent = 0
        var tally: [String: Int] = [:]
        let clock = ContinuousClock()
        let start = clock.now
        while sent < pushes {
            let count = min(batch, pushes - sent)
            let began = clock.now
            let outcomes = try await adapter.send(makeBatch(sent, count))
            timings.record(clock.now - began)
            for outcome in outcomes {
                let kind =
                    switch outcome {
                    case .sent, .held: "sent"
                    case .invalidToken: "invalid token"
                    case .failed(_, true), .failedRetryAfter: "retryable"
                    case .deferred, .deviceDeferred: "deferred"
                    case .failed(_, false): "failed"
                    }
                tally[kind, default: 0] += 1
            }
            sent += count
        }
        let seconds = (clock.now - start).seconds
        let (p50, p99) = timings.percentiles
        let rss = BatchTimings.peakRSS
        print(
            String(
                format:
                    "%d pushes in %.2f s: %.0f pushes/s; batch of %d: p50 %.1f ms, p99 %.1f ms; outcomes %@; resent after GOAWAY %d; peak RSS %@ \(server == nil ? "(adapter process)" : "(adapter and server in one process)")",
                sent, seconds, Double(sent) / seconds, batch, p50, p99,
                tally.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "), client.requestsResent, rss))
        await connection.close()
        client.shutdown()
        try await server?.stop()
    }
}
