import ArgumentParser
import Crypto
import Foundation
import Hiredis
import RichPushCommands
import RichPushCore
import RichPushQueue
import RichPushStorage

/// `richpush bench console-seed`: fills Redis for scripts/bench-console.sh, fast and in the real
/// formats, through the product's own write paths: scheduled notifications by the store's batch
/// create (its create script, 100 per call, pipelined), dead letters by the queue's own enqueue,
/// read and dead-letter script (the worker's path, pipelined in batches), installations by the
/// installation store. Nothing here writes a Redis format by hand.
struct BenchConsoleSeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console-seed",
        abstract: "Fill Redis with scheduled notifications, dead letters and installations for the console's benchmark.")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Scheduled notifications to create (default app).") var notifications = 1_000_000
    @Option(help: "Dead letters to write (rich push jobs of the default app; one in ten says timeout).") var deadLetters = 1_000_000
    @Option(help: "Installations to register (default app).") var devices = 100_000
    @Option(help: "Items per pipelined batch.") var batch = 1000

    func validate() throws {
        guard notifications >= 0, deadLetters >= 0, devices >= 0 else { throw ValidationError("counts must not be negative") }
        guard (1...10_000).contains(batch) else { throw ValidationError("--batch must be 1 to 10000") }
    }

    func run() async throws {
        let pool = RedisConnectionPool(configuration: try redis.configuration(clientName: "richpush-bench"), size: 4)
        let keys = queue.storageKeys(redis)
        let store = RedisNotificationStore(
            redis: pool, keys: keys, queue: JobQueue(redis: pool, configuration: queue.configuration),
            retention: .seconds(7 * 86_400), idBlock: batch)
        let clock = ContinuousClock()
        var start = clock.now
        let ids = try await createNotifications(store)
        Self.progress("created \(ids.count) scheduled notifications in \(Self.seconds(clock.now - start)) s")
        start = clock.now
        let dead = try await writeDeadLetters(store.queues, notifications: ids)
        Self.progress("wrote \(dead) dead letters in \(Self.seconds(clock.now - start)) s")
        start = clock.now
        let audience = FanOutAudience(argument: "default=bench:\(max(devices, 1))", owner: "user0")
        let registered = devices == 0 ? 0 : try await audience?.register(redis: pool, keys: keys, progress: Self.progress) ?? 0
        Self.progress("registered \(registered) installations in \(Self.seconds(clock.now - start)) s")
        await pool.close()
    }

    /// Scheduled a week ahead (they wait in the delayed set, as real scheduled sends do), by ten
    /// creators; one in ten targets `news && sports`. Four batches in flight at once.
    private func createNotifications(_ store: RedisNotificationStore) async throws -> [Int] {
        let sendAt = JobQueue.nowMilliseconds() + 7 * 86_400_000
        let batches = stride(from: 0, to: notifications, by: batch).map { $0..<min($0 + batch, notifications) }
        let (batchSize, lanes) = (batch, 4)
        return try await withThrowingTaskGroup(of: [Int].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var created: [Int] = []
                    for range in stride(from: lane, to: batches.count, by: lanes).map({ batches[$0] }) {
                        let drafts = range.map { index in
                            var draft = NotificationDraft(
                                message: "bench notification \(index)", richType: .text, contentType: "text/plain",
                                payload: Array("bench payload \(index % 100)".utf8), creator: "user\(index % 10)",
                                target: index % 10 == 0 ? "news && sports" : "news")
                            draft.sendAt = sendAt + Int64(index)
                            return draft
                        }
                        let outcomes = try await store.create(drafts) { Hex.encode(SHA256.hash(data: $0)) }
                        let ids = try outcomes.map { try $0.get().id }
                        created += ids
                        if range.lowerBound % (batchSize * 100) == 0 { Self.progress("  notifications: \(range.upperBound)") }
                    }
                    return created
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted()
        }
    }

    /// Rich push jobs of the seeded notifications, enqueued in arrival order, read by a consumer
    /// of the queue's group and dead-lettered by the queue's script, a batch at a time. Errors
    /// cycle through ten reasons (one is a timeout), so a filter can pick a tenth of them.
    private func writeDeadLetters(_ queues: [JobQueue], notifications ids: [Int]) async throws -> Int {
        guard deadLetters > 0 else { return 0 }
        let queue = queues[0]
        try await queue.ensureGroup()
        let reader = RedisConnection(configuration: try redis.configuration(clientName: "richpush-bench-reader"))
        do {
            let written = try await writeDeadLetters(queue, reader: reader, notifications: ids)
            await reader.close()
            return written
        } catch {
            await reader.close()
            throw error
        }
    }

    private func writeDeadLetters(_ queue: JobQueue, reader: RedisConnection, notifications ids: [Int]) async throws -> Int {
        var written = 0
        while written < deadLetters {
            let count = min(batch, deadLetters - written)
            let commands = (written..<(written + count)).map { index in
                let notification = ids.isEmpty ? index + 1 : ids[index % ids.count]
                return queue.enqueueCommand(for: RichPushJob.request(notification: notification, app: .default))
            }
            for reply in try await reader.pipeline(commands) { try reply.throwingError() }
            let jobs = try await queue.read(on: reader, consumer: "bench-seed", count: count, block: .milliseconds(100))
            let settled = jobs.enumerated().compactMap { offset, delivery -> (id: String, error: String)? in
                guard case .success(let job) = delivery else { return nil }
                return (job.id, Self.reasons[(written + offset) % Self.reasons.count])
            }
            guard settled.count == count else {
                throw CLIError("read \(settled.count) of \(count) jobs just enqueued: is a worker consuming this queue?")
            }
            try await queue.deadLetter(settled)
            written += count
            if written % (batch * 100) == 0 { Self.progress("  dead letters: \(written)") }
        }
        return written
    }

    static let reasons = [
        "APNs timeout after 10 s", "FCM answered 500 INTERNAL", "BadDeviceToken", "FCM answered 503 UNAVAILABLE",
        "payload too large for the platform",
        "TooManyProviderTokenUpdates", "web push endpoint answered 410 Gone", "rendering failed: missing property name",
        "ExpiredProviderToken",
        "hub unreachable: connection refused",
    ]

    private static func progress(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", duration.seconds)
    }
}
