import ArgumentParser
import Foundation
import Hiredis
import RichPushCore
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Synchronization

/// `richpush replay --from T --to T`: re-enqueue jobs from the stream's retained history.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-enqueue jobs whose enqueue time lies in a window of the stream's retained history.",
        discussion: """
            TIME is a stream id (1732237200000-0), milliseconds since 1970, an ISO 8601 time \
            (2026-11-22T01:00:00Z), or an age relative to now, written with '=' (--from=-15m). Replayed jobs are new \
            entries with attempt 0 that keep their origin id. A replayed rich push reaches only the \
            devices that did not get it yet: each (notification, device) delivery is recorded once. \
            --force first clears the delivery ledger entries of the selected notifications, so they are \
            pushed again to every device (once per replay: the new records guard redeliveries).
            """)

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: ArgumentHelp("Start of the window (inclusive).", valueName: "TIME")) var from: String
    @Option(help: ArgumentHelp("End of the window (inclusive; default now).", valueName: "TIME")) var to = "+"
    @Option(help: "Only jobs of this type (repeatable).") var type: [String] = []
    @Option(help: "Only the delivery jobs of this notification id (rich-push and its fan-out batches).") var notification: Int?
    @Flag(help: "List what would be replayed; change nothing.") var dryRun = false
    @Flag(help: "Push again to devices that already got the notification (clears its delivery ledger entries first).") var force = false

    func validate() throws {
        _ = try StreamTime.parse(from)
        if to != "+" { _ = try StreamTime.parse(to) }
    }

    func run() async throws {
        let start = try StreamTime.parse(from)
        let end = to == "+" ? "+" : try StreamTime.parse(to)
        let connection = try await connect(redis, clientName: "richpush-replay")
        // Every partition's stream, or with --notification the one that holds its jobs.
        var configurations = queue.partitionConfigurations
        if let notification, configurations.count > 1 {
            configurations = [configurations[queue.storageKeys(redis).partitionIndex(ofNotification: notification)]]
        }
        var replayed = 0, skipped = 0
        do {
            for configuration in configurations {
                let result = try await replay(
                    JobQueue(redis: connection, configuration: configuration), from: start, to: end, connection: connection)
                let partition = queue.partitions > 1 ? "\(configuration.partition)/" : ""
                for candidate in result.candidates {
                    print(
                        "\(dryRun ? "would replay" : "replayed") \(partition)\(candidate.id) type=\(candidate.type) origin=\(candidate.origin)"
                    )
                }
                replayed += result.candidates.count
                skipped += result.skipped
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        print("\(dryRun ? "would replay" : "replayed") \(replayed) job(s)\(skipped > 0 ? ", skipped \(skipped) undecodable" : "")")
    }

    private func replay(
        _ jobQueue: JobQueue, from start: String, to end: String, connection: any RedisClient
    ) async throws -> (candidates: [JobQueue.ReplayCandidate], skipped: Int) {
        let types = type.isEmpty ? nil : Set(type)
        let notification = self.notification
        let selected: @Sendable (Job) -> Bool = { job in
            notification.map { (try? RichPushJob.delivery(of: job))?.notification == $0 } ?? true
        }
        var include = selected
        if force {
            // Select first, clear those notifications' ledger entries, then replay exactly the selection.
            let chosen = Mutex<[Job]>([])
            _ = try await jobQueue.replay(from: start, to: end, types: types, dryRun: true) { job in
                guard selected(job) else { return false }
                chosen.withLock { $0.append(job) }
                return true
            }
            let jobs = chosen.withLock { $0 }
            try await forgetDeliveries(of: jobs, connection: connection, queue: jobQueue)
            let ids = Set(jobs.map(\.id))
            include = { ids.contains($0.id) }
        }
        return try await jobQueue.replay(from: start, to: end, types: types, dryRun: dryRun, where: include)
    }

    /// `--force`: clears the delivery ledger entries the selected rich-push jobs would meet (a whole
    /// notification for a rich-push job, its installations for a fan-out batch), after taking back
    /// the failures a dead-lettering of them marked (so the `failed` count does not keep them).
    private func forgetDeliveries(of jobs: [Job], connection: any RedisClient, queue jobQueue: JobQueue) async throws {
        let ledger = RedisDeliveryLedger(redis: connection, keys: queue.storageKeys(redis), retention: .seconds(86400))
        if !dryRun { try await ledger.reviveDeadLettered(jobs.compactMap(RichPushJob.scope(of:))) }
        // Each app's notifications are in its own ledger.
        struct Notification: Hashable, Comparable {
            var app: AppID
            var id: Int
            static func < (lhs: Notification, rhs: Notification) -> Bool { (lhs.app, lhs.id) < (rhs.app, rhs.id) }
            var name: String { app.isDefault ? "\(id)" : "\(id) of app \(app)" }
        }
        var whole = Set<Notification>()
        var partial: [Notification: Set<String>] = [:]
        for job in jobs {
            guard let delivery = try? RichPushJob.delivery(of: job) else { continue }
            let notification = Notification(app: delivery.app, id: delivery.notification)
            if let installations = delivery.installations {
                partial[notification, default: []].formUnion(installations)
            } else {
                whole.insert(notification)
            }
        }
        for (notification, installations) in partial.sorted(by: { $0.key < $1.key }) where whole.contains(notification) == false {
            if dryRun {
                print(
                    "would clear the delivery ledger entries of notification \(notification.name) for \(installations.count) installation(s)"
                ); continue
            }
            let cleared = try await ledger.forApp(notification.app).forgetDeliveries(
                id: notification.id, installations: installations.sorted())
            print("cleared \(cleared) delivery ledger entries of notification \(notification.name)")
        }
        for notification in whole.sorted() {
            if dryRun { print("would clear the delivery ledger entries of notification \(notification.name)"); continue }
            let cleared = try await ledger.forApp(notification.app).forgetDeliveries(id: notification.id)
            print("cleared \(cleared) delivery ledger entries of notification \(notification.name)")
        }
    }
}

/// Turns the operator's way of naming a moment into a stream id bound.
enum StreamTime {
    static func parse(_ text: String, now: Date = Date()) throws -> String {
        if StreamID(text) != nil { return text }
        if let relative = relativeSeconds(text) {
            return "\(Int64((now.timeIntervalSince1970 + relative) * 1000))"
        }
        if let date = try? Date(text, strategy: .iso8601) {
            return "\(Int64(date.timeIntervalSince1970 * 1000))"
        }
        throw ValidationError(
            "'\(text)' is not a time: use a stream id, milliseconds, ISO 8601 (2026-11-22T01:00:00Z) or -15m / -2h / -30s")
    }

    private static func relativeSeconds(_ text: String) -> Double? {
        guard text.hasPrefix("-"), let unit = text.last, let value = Double(text.dropFirst().dropLast()) else { return nil }
        switch unit {
        case "s": return -value
        case "m": return -value * 60
        case "h": return -value * 3600
        case "d": return -value * 86400
        default: return nil
        }
    }
}
