import ArgumentParser
import Foundation
import Hiredis
import RichPushQueue
import RichPushStorage

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
            // Each partition's newest, merged newest first.
            var letters: [(partition: String?, letter: DeadLetter)] = []
            for configuration in queue.partitionConfigurations {
                let partition = queue.partitions > 1 ? configuration.partition : nil
                letters += try await JobQueue(redis: connection, configuration: configuration).deadLetters(count: count).map {
                    (partition, $0)
                }
            }
            await connection.close()
            letters = Array(letters.sorted { $0.letter.deadAt > $1.letter.deadAt }.prefix(count))
            if letters.isEmpty && !json { print("no dead letters") }
            for (partition, letter) in letters {
                print(json ? letter.jsonLine(partition: partition) : letter.textLine(partition: partition))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one dead letter with its payload.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "Id of the dead letter (from dlq list; past one partition with its partition, q3/<id>).") var id: String

        func run() async throws {
            let (configuration, streamID) = try queue.deadLetterTarget(id)
            let connection = try await connect(redis, clientName: "richpush-dlq")
            let letter = try await JobQueue(redis: connection, configuration: configuration).deadLetter(id: streamID)
            await connection.close()
            guard let letter else { throw CLIError("no dead letter with id \(id)") }
            print(letter.textLine(partition: queue.partitions > 1 ? configuration.partition : nil))
            if let job = letter.job { print("payload: \(String(decoding: job.payload, as: UTF8.self))") }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move dead letters back into the queue as fresh jobs.",
            discussion: """
                A rich push's devices that its dead-lettering marked failed are queued again (and its \
                notification, if it said failed), so the status tells the truth while the replayed job runs.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "Ids to replay.") var ids: [String] = []
        @Flag(help: "Replay every dead letter.") var all = false

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("give dead-letter ids or --all (not both)") }
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-dlq")
            var moved = 0
            do {
                if all {
                    for configuration in queue.partitionConfigurations {
                        moved += try await replay(nil, in: configuration, connection: connection)
                    }
                } else {
                    for (configuration, streamIDs) in try queue.deadLetterTargets(ids) {
                        moved += try await replay(streamIDs, in: configuration, connection: connection)
                    }
                }
            } catch {
                await connection.close()
                throw error
            }
            await connection.close()
            print("replayed \(moved) dead letter(s)")
            if !all && moved < ids.count { throw CLIError("\(ids.count - moved) id(s) were not in the dead letters") }
        }

        /// Replays first, then takes back the failures the rich pushes' dead-lettering marked: if
        /// that second step fails, the replayed jobs take them back themselves as they lease their
        /// devices again, whereas the other order could leave a dead job whose devices say queued.
        private func replay(_ ids: [String]?, in configuration: JobQueueConfiguration, connection: any RedisClient) async throws -> Int {
            let jobQueue = JobQueue(redis: connection, configuration: configuration)
            // The retention only sets the expiry of keys a ledger creates; reviving creates none.
            let ledger = RedisDeliveryLedger(redis: connection, keys: queue.storageKeys(redis), retention: .seconds(86400))
            do {
                return try await ledger.replayDeadLetters(ids, in: jobQueue)
            } catch let error as RedisDeliveryLedger.ReviveError {
                throw CLIError(error.description)
            }
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
            var deleted = 0
            if all {
                for configuration in queue.partitionConfigurations {
                    deleted += try await JobQueue(redis: connection, configuration: configuration).purgeDeadLetters(ids: nil)
                }
            } else {
                for (configuration, streamIDs) in try queue.deadLetterTargets(ids) {
                    deleted += try await JobQueue(redis: connection, configuration: configuration).purgeDeadLetters(ids: streamIDs)
                }
            }
            await connection.close()
            print("purged \(deleted) dead letter(s)")
        }
    }
}

extension QueueOptions {
    /// The partition and stream id a dead-letter id names: `q3/<id>` past one partition.
    func deadLetterTarget(_ id: String) throws -> (JobQueueConfiguration, String) {
        guard partitions > 1 else { return (configuration, id) }
        let parts = id.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2, let configuration = partitionConfigurations.first(where: { $0.partition == parts[0] }) else {
            throw CLIError(
                "dead letter '\(id)': with --partitions \(partitions), give it as listed, <partition>/<id> (e.g. q3/1732237200000-0)")
        }
        return (configuration, parts[1])
    }

    func deadLetterTargets(_ ids: [String]) throws -> [(JobQueueConfiguration, [String])] {
        var byPartition: [String: (JobQueueConfiguration, [String])] = [:]
        for id in ids {
            let (configuration, streamID) = try deadLetterTarget(id)
            byPartition[configuration.partition, default: (configuration, [])].1.append(streamID)
        }
        return byPartition.keys.sorted().map { byPartition[$0]! }
    }
}

extension DeadLetter {
    func textLine(partition: String?) -> String {
        let type = job?.type ?? "?"
        let when = Date(timeIntervalSince1970: Double(deadAt) / 1000).formatted(.iso8601)
        return
            "\(partition.map { "\($0)/" } ?? "")\(id)  type=\(type)  origin=\(origin)  dead=\(when)  error=\(undecodable.map { "undecodable: \($0); " } ?? "")\(error)"
    }

    func jsonLine(partition: String?) -> String {
        let object: [String: Any] = [
            "id": partition.map { "\($0)/\(id)" } ?? id, "type": job?.type ?? NSNull(), "origin": origin, "deadAt": deadAt, "error": error,
            "attempt": job?.attempt ?? NSNull(), "payloadBytes": job?.payload.count ?? 0,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
