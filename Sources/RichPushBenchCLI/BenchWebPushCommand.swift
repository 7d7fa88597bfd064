import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import Hiredis
import NIOCore
import NIOSSL
import RichPushCommands
import RichPushCore
import RichPushWebPush

/// `richpush bench webpush`: pushes per second through ``WebPushPushAdapter`` to a running
/// `webpush-sim` over TLS on loopback (scripts/bench-webpush.sh starts it in its own process):
/// every push encrypted to its own browser's keys and signed with the VAPID token of the origin.
/// Reports the batch latency, this process's CPU per push (the adapter's, encryption included)
/// and the VAPID signatures the run made.
struct BenchWebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush", abstract: "Measure the Web Push adapter against a running webpush-sim.")

    @Option(help: "Pushes to send.") var pushes = 100_000
    @Option(help: "Pushes per adapter call (a worker's batch).") var batch = 1000
    @Option(help: "Browsers (subscriptions) the pushes go to, in turn.") var browsers = 100
    @Option(help: "Requests in flight per adapter call.") var concurrency = 128
    @Option(help: "Batches sent at once, as a worker's slots send them.") var inFlight = 1
    @Option(help: "Connections per push service origin.") var connections = 8
    @Option(help: "The webpush-sim's URL (https://127.0.0.1:PORT).") var url: String
    @Option(help: "The simulator's ca.pem.") var caFile: String
    @Option(help: "http2: our HTTP/2 client, one per origin; http: AsyncHTTPClient (HTTP/1.1 or HTTP/2 as it negotiates).") var transport =
        "http2"

    func validate() throws {
        guard ["http2", "http"].contains(transport) else { throw ValidationError("--transport is http2 or http") }
        guard pushes > 0, batch > 0, (1...10_000).contains(browsers), (1...4096).contains(concurrency), (1...256).contains(connections),
            (1...64).contains(inFlight)
        else {
            throw ValidationError(
                "--pushes and --batch must be positive, --browsers 1 to 10000, --concurrency 1 to 4096, --connections 1 to 256, --in-flight 1 to 64"
            )
        }
    }

    func run() async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    private func measure(_ http: HTTPClient) async throws {
        let vapidKey = P256.Signing.PrivateKey()
        let vapid = try VAPIDSigner(privateKey: Base64URL.encode(vapidKey.rawRepresentation), subject: "mailto:bench@example.com")
        var subscribed: [Installation] = []
        for index in 0..<browsers {
            let endpoint = try await subscribe(http, applicationServerKey: Base64URL.encode(vapidKey.publicKey.x963Representation))
            let key = P256.KeyAgreement.PrivateKey()
            let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
            subscribed.append(
                Installation(
                    id: "web\(index)", platform: .webpush, handle: endpoint, tags: [], owner: "bench", updatedAt: 0,
                    webPushKeys: WebPushKeys(p256dh: Base64URL.encode(key.publicKey.x963Representation), auth: Base64URL.encode(auth))))
        }
        let connections =
            transport == "http2"
            ? WebPushConnections(trustRoots: try NIOSSLCertificate.fromPEMFile(caFile), connections: min(connections, 8)) : nil
        defer { connections?.shutdown() }
        let adapter = WebPushPushAdapter(http: http, connections: connections, vapid: vapid, concurrency: concurrency)
        let renderer = PushRenderer()
        let installations = subscribed
        @Sendable func makeBatch(_ start: Int, _ count: Int) throws -> [OutgoingPush] {
            try (start..<start + count).map { index in
                let notification = RichNotification(
                    id: index + 1, message: "bench", richType: .image, contentType: "image/png", payloadHash: "h",
                    payloadSize: 1, creator: "b", target: "t", createdAt: 0)
                var rendered = try renderer.renderWebPush(notification)
                // TTL 0: the service delivers to a connected browser or drops it, so a run of any
                // length does not fill what it keeps for offline subscribers.
                rendered.deadline = 0
                return OutgoingPush(notification: index + 1, installation: installations[index % installations.count], rendered: rendered)
            }
        }
        _ = try await adapter.send(try makeBatch(0, min(batch, 100)))  // warm up: connections, the token
        let me = ProcessProbe(name: "bench", pid: getpid())
        let cpuBefore = me.read()?.cpuSeconds ?? 0
        let signaturesBefore = vapid.signatureCount
        let batches = (pushes + batch - 1) / batch
        let clock = ContinuousClock()
        let start = clock.now
        // `inFlight` senders, each taking every inFlight-th batch.
        let (timings, failed) = try await withThrowingTaskGroup(of: (BatchTimings, Int).self) { group in
            for sender in 0..<min(inFlight, batches) {
                group.addTask {
                    var timings = BatchTimings()
                    var failed = 0
                    for number in stride(from: sender, to: batches, by: inFlight) {
                        let first = number * batch
                        let outgoing = try makeBatch(first, min(batch, pushes - first))
                        let began = clock.now
                        let outcomes = try await adapter.send(outgoing)
                        timings.record(clock.now - began)
                        failed += outcomes.filter { if case .sent = $0 { false } else { true } }.count
                    }
                    return (timings, failed)
                }
            }
            var all = BatchTimings()
            var failed = 0
            for try await (timings, count) in group {
                all.merge(timings)
                failed += count
            }
            return (all, failed)
        }
        let sent = pushes
        let seconds = (clock.now - start).seconds
        let cpuMicros = ((me.read()?.cpuSeconds ?? 0) - cpuBefore) * 1_000_000 / Double(sent)
        let (p50, p99) = timings.percentiles
        print(
            String(
                format: "%d pushes to %d browsers in %.2f s: %.0f pushes/s; batch of %d: p50 %.1f ms, p99 %.1f ms; not sent %d; "
                    + "CPU %.1f µs per push (encryption included); VAPID signatures %d; peak RSS %@ (webpush-sim in its own process; %@; %d in flight)",
                sent, browsers, seconds, Double(sent) / seconds, batch, p50, p99, failed, cpuMicros,
                vapid.signatureCount - signaturesBefore,
                BatchTimings.peakRSS, transport, inFlight))
    }

    private func subscribe(_ http: HTTPClient, applicationServerKey: String) async throws -> String {
        var request = HTTPClientRequest(url: url + "/subscribe")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: "{\"applicationServerKey\":\"\(applicationServerKey)\"}"))
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .created, let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
            let endpoint = object["endpoint"] as? String
        else {
            throw CLIError("webpush-sim did not make a subscription: \(response.status)")
        }
        return endpoint
    }
}
