import Foundation
import Hiredis
import RichPushCommands
import RichPushCore
import RichPushStorage
import Synchronization

/// The load of one `richpush bench fairness` phase: each app's creates through the API with its
/// own key (a flood in batches over its own connections, a set rate one notification a call,
/// a fan-out one call), each notification timed from the start of its call.
final class FairnessLoad: Sendable {
    private let single: [String: APICreator]
    private let batches: [String: BatchAPICreator]
    private let recorders: [String: AppLoadRecorder]
    private let tag: @Sendable (String, Int) -> String
    /// Batches of a flood in flight at once (one per connection).
    private let connections: Int
    /// Set when the fan-out's every device has an outcome (or there is none).
    private let fanOutDone = Atomic<Bool>(true)
    /// The number of each flooding app's next notification (its device: number mod devices).
    private let nextIndex = Mutex<[String: Int]>([:])
    private let fanOutResult = Mutex<FanOutResult?>(nil)

    init(
        api: String, keys: [String: String], recorders: [String: AppLoadRecorder], batchSize: Int, connections: Int,
        tag: @escaping @Sendable (String, Int) -> String
    ) {
        let payload = [UInt8](repeating: 0x42, count: 1024)
        single = keys.reduce(into: [:]) {
            $0[$1.key] = APICreator(baseURL: api, authorization: "Bearer \($1.value)", payload: payload, connections: 4)
        }
        batches = keys.reduce(into: [:]) {
            $0[$1.key] = BatchAPICreator(
                baseURL: api, authorization: "Bearer \($1.value)", payload: payload, connections: connections, batchSize: batchSize)
        }
        self.recorders = recorders
        self.tag = tag
        self.connections = connections
    }

    func retried(_ app: String) -> Int { (single[app]?.retried ?? 0) + (batches[app]?.retried ?? 0) }

    func shutdown() async {
        for creator in single.values { await creator.shutdown() }
        for creator in batches.values { await creator.shutdown() }
    }

    /// Runs the floods and rates for `seconds` (the rates longer, until the fan-out is done) and
    /// the fan-out; the fan-out's figures.
    func run(
        seconds: Double, floods: [String], rates: [String: Int], fanOut: (app: String, tag: String, keys: StorageKeys)?,
        redis: any RedisClient
    ) async throws -> FanOutResult? {
        let start = ContinuousClock.now
        let end = start + .seconds(seconds)
        if fanOut != nil { fanOutDone.store(false, ordering: .sequentiallyConsistent) }
        try await withThrowingDiscardingTaskGroup { group in
            if let fanOut {
                group.addTask {
                    defer { self.fanOutDone.store(true, ordering: .sequentiallyConsistent) }
                    let result = try await self.fanOut(
                        fanOut.app, tag: fanOut.tag, keys: fanOut.keys, redis: redis, timeout: .seconds(seconds + 600))
                    self.fanOutResult.withLock { $0 = result }
                }
            }
            for app in floods {
                guard let creator = batches[app], let recorder = recorders[app] else { continue }
                for _ in 0..<connections {
                    group.addTask {
                        while ContinuousClock.now < end {
                            let first = self.nextIndex.withLock { next in
                                defer { next[app, default: 0] += creator.batchSize }
                                return next[app, default: 0]
                            }
                            let items = (first..<first + creator.batchSize).map { (index: $0, target: self.tag(app, $0)) }
                            let started = ContinuousClock.now
                            let ids = try await creator.create(items)
                            let returned = ContinuousClock.now
                            for id in ids { recorder.created(id, at: started, returned: returned) }
                        }
                    }
                }
            }
            for (app, perSecond) in rates {
                guard let creator = single[app], let recorder = recorders[app] else { continue }
                group.addTask {
                    try await withThrowingDiscardingTaskGroup { sends in
                        var index = 0
                        while true {
                            let due = start + .seconds(Double(index) / Double(perSecond))
                            if due >= end && self.fanOutDone.load(ordering: .sequentiallyConsistent) { break }
                            try await Task.sleep(until: due, clock: .continuous)
                            let number = index
                            // Each on a task of its own: a slow answer does not push the next send back.
                            sends.addTask {
                                let during = !self.fanOutDone.load(ordering: .sequentiallyConsistent)
                                let started = ContinuousClock.now
                                let id = try await creator.create(index: number, target: self.tag(app, number))
                                recorder.created(id, at: started, returned: .now, duringFanOut: during)
                            }
                            index += 1
                        }
                    }
                }
            }
        }
        return self.fanOutResult.withLock { $0 }
    }

    /// One notification of `app` to `tag`; polls its status until every device of the tag has an
    /// outcome (sent, held, failed).
    private func fanOut(
        _ app: String, tag: String, keys: StorageKeys, redis: any RedisClient, timeout: Duration
    ) async throws -> FanOutResult {
        guard let creator = single[app] else { throw CLIError("no API key for app \(app)") }
        let audience = try await redis.send("SCARD", keys.tag(tag)).int ?? 0
        guard audience > 0 else { throw CLIError("tag \(tag) of app \(app) has no installations (--register-audience)") }
        let started = ContinuousClock.now
        let id = try await creator.create(index: 0, target: tag)
        let deadline = started + timeout
        var counts: [String: Int] = [:]
        while ContinuousClock.now < deadline {
            let counters: [DeliveryCounter] = [.sent, .held, .failed]
            let reply =
                try await redis.send(RedisCommand("HMGET", arguments: [keys.notification(id)] + counters.map(\.rawValue))).array ?? []
            let values = reply.map { $0.string.flatMap(Int.init) ?? 0 }
            counts = Dictionary(uniqueKeysWithValues: zip(counters.map(\.rawValue), values))
            if values.reduce(0, +) >= audience { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let done = counts.values.reduce(0, +)
        return FanOutResult(
            app: app, tag: tag, devices: audience, outcomes: done, counts: counts, seconds: seconds,
            pushesPerSecond: Double(done) / max(seconds, 0.001))
    }
}

/// A fan-out's figures: from the start of its create call until every device had an outcome.
struct FanOutResult: Codable, Sendable {
    var app: String
    var tag: String
    var devices: Int
    /// Devices with an outcome when the wait ended (all of them unless it timed out).
    var outcomes: Int
    var counts: [String: Int]
    var seconds: Double
    var pushesPerSecond: Double
}
