import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hiredis
import Hummingbird
import Logging
import RichPushCommands
import RichPushCore
import RichPushStorage
import RichPushWebhooks
import ServiceLifecycle
import Synchronization

/// `richpush bench webhooks`: how many events a second one dispatcher delivers to a receiver on
/// loopback. It fills the outbox of a webhook as the record scripts would (`sent` events, a few
/// devices per entry), runs a dispatcher as a worker does, and a receiver that checks every
/// signature and counts distinct event ids; the figure is events received over the time from the
/// first POST to the last event.
struct BenchWebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Measure webhook delivery: events/s to a local receiver.")

    @OptionGroup var redis: RedisOptions
    @Option(help: "Events to deliver.") var events = 100_000
    @Option(help: "Events per outbox entry (devices per recorded batch).") var perEntry = 10
    @Option(help: "Most events per POST.") var eventsPerDelivery = 100
    @Option(help: "POSTs in flight.") var concurrency = 16
    @Option(help: "Key prefix (a private one per run).") var prefix = "bench-webhooks"

    func validate() throws {
        guard events > 0, perEntry > 0, eventsPerDelivery > 0, concurrency > 0 else {
            throw ValidationError("every count must be positive")
        }
    }

    func run() async throws {
        var logger = Logger(label: "richpush.bench")
        logger.logLevel = .warning
        let redisConfiguration = try redis.configuration(clientName: "richpush-bench")
        let connection = try await RedisConnection.connect(configuration: redisConfiguration)
        let keys = StorageKeys(prefix: prefix)
        let store = RedisWebhookStore(redis: connection, keys: keys)
        let secret = "whsec_bench-secret-0123456789"
        let receiver = BenchReceiver(secret: secret)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPWebhookTransport.configuration(connections: concurrency))
        let dispatcher = WebhookDispatcher(
            store: store, transport: HTTPWebhookTransport(client: client), redis: redisConfiguration,
            configuration: WebhookDispatcherConfiguration(
                consumer: "bench", concurrency: concurrency,
                eventsPerDelivery: eventsPerDelivery),
            logger: logger)
        let port = Atomic<Int>(0)
        let app = Application(
            router: receiver.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.store($0.localAddress?.port ?? 0, ordering: .relaxed) }, logger: logger)
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            while port.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let webhook = Webhook(
                id: "wh_" + String(format: "%016llx", UInt64.random(in: 0 ... .max)), owner: "bench",
                url: "http://127.0.0.1:\(port.load(ordering: .relaxed))/hook", events: [.sent], allUsers: false,
                description: "bench", secret: secret, createdAt: RedisWebhookStore.nowMilliseconds())
            _ = try await store.create(webhook)
            try await fill(connection, keys: keys)
            let me = ProcessProbe(name: "bench", pid: getpid())
            let cpu = me.read()?.cpuSeconds ?? 0
            let started = ContinuousClock.now
            group.addTask { try await dispatcher.run() }
            while receiver.count < events { try await Task.sleep(for: .milliseconds(5)) }
            let elapsed = receiver.lastAt.map { $0 - (receiver.firstAt ?? started) } ?? (ContinuousClock.now - started)
            let used = (me.read()?.cpuSeconds ?? 0) - cpu
            dispatcher.stop()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                String(
                    format:
                        "webhooks: %d events in %d POSTs in %.2f s: %.0f events/s, %.0f POSTs/s; CPU of dispatcher+receiver %.1f µs/event; bad signatures %d",
                    receiver.count, receiver.posts, seconds, Double(receiver.count) / seconds, Double(receiver.posts) / seconds,
                    used * 1e6 / Double(receiver.count), receiver.badSignatures))
            _ = try await store.delete(id: webhook.id)
            try await connection.send("DEL", keys.webhookOutbox)
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        try await client.shutdown()
        await connection.close()
    }

    /// XADDs `events` sent-events in entries of `perEntry`, pipelined 500 entries at a time.
    private func fill(_ connection: RedisConnection, keys: StorageKeys) async throws {
        let now = RedisWebhookStore.nowMilliseconds()
        var written = 0
        var notification = 1
        while written < events {
            var batch: [RedisCommand] = []
            while batch.count < 500 && written < events {
                let count = min(perEntry, events - written)
                let items = (0..<count).map {
                    #"{"installation":"device-\#(written + $0)","result":{"adapterID":"n\#(notification)","state":"sent"}}"#
                }
                batch.append(
                    RedisCommand(
                        "XADD", keys.webhookOutbox, "*", "n", notification, "u", "bench", "t", "sent", "at", now,
                        "e", "[" + items.joined(separator: ",") + "]"))
                written += count
                notification += 1
            }
            try await connection.sendAll(batch)
        }
    }
}

/// The bench's receiver: checks each signature, counts distinct events.
private final class BenchReceiver: Sendable {
    let secret: String
    private let state = Mutex<(ids: Set<String>, posts: Int, bad: Int, first: ContinuousClock.Instant?, last: ContinuousClock.Instant?)>(
        ([], 0, 0, nil, nil))

    init(secret: String) { self.secret = secret }

    var count: Int { state.withLock { $0.ids.count } }
    var posts: Int { state.withLock { $0.posts } }
    var badSignatures: Int { state.withLock { $0.bad } }
    var firstAt: ContinuousClock.Instant? { state.withLock { $0.first } }
    var lastAt: ContinuousClock.Instant? { state.withLock { $0.last } }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("hook") { request, _ -> HTTPResponse.Status in
            let body = Array(buffer: try await request.body.collect(upTo: 4 << 20))
            let valid = WebhookSignature.verify(
                header: request.headers[HTTPField.Name("X-RichPush-Signature")!] ?? "",
                timestamp: request.headers[HTTPField.Name("X-RichPush-Timestamp")!] ?? "", body: body, secret: self.secret)
            let ids = ((try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["events"] as? [[String: Any]] ?? [])
                .compactMap { $0["id"] as? String }
            self.state.withLock { state in
                state.posts += 1
                if !valid { state.bad += 1 }
                state.ids.formUnion(ids)
                if state.first == nil { state.first = .now }
                state.last = .now
            }
            return valid ? .noContent : .unauthorized
        }
        return router
    }
}
