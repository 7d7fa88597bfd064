import ArgumentParser
import Foundation
import RichPushQueue

/// `richpush replay --from T --to T`: re-enqueue jobs from the stream's retained history.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-enqueue jobs whose enqueue time lies in a window of the stream's retained history.",
        discussion: """
        TIME is a stream id (1732237200000-0), milliseconds since 1970, an ISO 8601 time \
        (2026-11-22T01:00:00Z), or an age relative to now, written with '=' (--from=-15m). Replayed jobs are new \
        entries with attempt 0 that keep their origin id. A replayed rich push reaches only the \
        devices that did not get it yet: each (notification, device) delivery is claimed once.
        """)

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: ArgumentHelp("Start of the window (inclusive).", valueName: "TIME")) var from: String
    @Option(help: ArgumentHelp("End of the window (inclusive; default now).", valueName: "TIME")) var to = "+"
    @Option(help: "Only jobs of this type (repeatable).") var type: [String] = []
    @Option(help: "Only the delivery jobs of this notification id (rich-push and its fan-out batches).") var notification: Int?
    @Flag(help: "List what would be replayed; change nothing.") var dryRun = false

    func validate() throws {
        _ = try StreamTime.parse(from)
        if to != "+" { _ = try StreamTime.parse(to) }
    }

    func run() async throws {
        let start = try StreamTime.parse(from)
        let end = to == "+" ? "+" : try StreamTime.parse(to)
        let connection = try await connect(redis, clientName: "richpush-replay")
        let result = try await JobQueue(redis: connection, configuration: queue.configuration)
            .replay(from: start, to: end, types: type.isEmpty ? nil : Set(type), dryRun: dryRun) { [notification] job in
                guard let notification else { return true }
                return Self.notificationID(of: job) == notification
            }
        await connection.close()
        for candidate in result.candidates {
            print("\(dryRun ? "would replay" : "replayed") \(candidate.id) type=\(candidate.type) origin=\(candidate.origin)")
        }
        print("\(dryRun ? "would replay" : "replayed") \(result.candidates.count) job(s)\(result.skipped > 0 ? ", skipped \(result.skipped) undecodable" : "")")
    }
}

extension ReplayCommand {
    /// The notification a rich-push job delivers: its payload is the id, or {"id": n, …} for a batch.
    static func notificationID(of job: Job) -> Int? {
        switch job.type {
        case "rich-push": return Int(String(decoding: job.payload, as: UTF8.self))
        case "rich-push-batch":
            return (try? JSONSerialization.jsonObject(with: Data(job.payload)) as? [String: Any])?["id"] as? Int
        default: return nil
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
        throw ValidationError("'\(text)' is not a time: use a stream id, milliseconds, ISO 8601 (2026-11-22T01:00:00Z) or -15m / -2h / -30s")
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
