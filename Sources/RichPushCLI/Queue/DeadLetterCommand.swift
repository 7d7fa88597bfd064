import ArgumentParser
import Foundation
import RichPushQueue

/// `richpush dlq list|show|replay|purge`.
struct DeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect, replay and purge dead-lettered jobs.",
        subcommands: [List.self, Show.self, Replay.self, Purge.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dead letters, newest first.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Option(help: "How many to list.") var count = 20
        @Flag(help: "One JSON object per line.") var json = false

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-dlq")
            let letters = try await JobQueue(redis: connection, configuration: queue.configuration).deadLetters(count: count)
            await connection.close()
            if letters.isEmpty && !json { print("no dead letters") }
            for letter in letters { print(json ? letter.jsonLine : letter.textLine) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one dead letter with its payload.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "Id of the dead letter (from dlq list).") var id: String

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-dlq")
            let letter = try await JobQueue(redis: connection, configuration: queue.configuration).deadLetter(id: id)
            await connection.close()
            guard let letter else { throw CLIError("no dead letter with id \(id)") }
            print(letter.textLine)
            if let job = letter.job { print("payload: \(String(decoding: job.payload, as: UTF8.self))") }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move dead letters back into the queue as fresh jobs.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "Ids to replay.") var ids: [String] = []
        @Flag(help: "Replay every dead letter.") var all = false

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("give dead-letter ids or --all (not both)") }
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-dlq")
            let moved = try await JobQueue(redis: connection, configuration: queue.configuration).replayDeadLetters(ids: all ? nil : ids)
            await connection.close()
            print("replayed \(moved) dead letter(s)")
            if !all && moved < ids.count { throw CLIError("\(ids.count - moved) id(s) were not in the dead letters") }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete dead letters for good.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "Ids to delete.") var ids: [String] = []
        @Flag(help: "Delete every dead letter.") var all = false

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("give dead-letter ids or --all (not both)") }
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-dlq")
            let deleted = try await JobQueue(redis: connection, configuration: queue.configuration).purgeDeadLetters(ids: all ? nil : ids)
            await connection.close()
            print("purged \(deleted) dead letter(s)")
        }
    }
}

extension DeadLetter {
    var textLine: String {
        let type = job?.type ?? "?"
        let when = Date(timeIntervalSince1970: Double(deadAt) / 1000).formatted(.iso8601)
        return "\(id)  type=\(type)  origin=\(origin)  dead=\(when)  error=\(undecodable.map { "undecodable: \($0); " } ?? "")\(error)"
    }

    var jsonLine: String {
        let object: [String: Any] = ["id": id, "type": job?.type ?? NSNull(), "origin": origin, "deadAt": deadAt, "error": error,
                                     "attempt": job?.attempt ?? NSNull(), "payloadBytes": job?.payload.count ?? 0]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
