import ArgumentParser
import Foundation
import Hiredis
import RichPushQueue

/// `richpush stats`: the queue's state.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Print the queue's state: length, lag, pending, delayed, dead letters, consumers, totals.")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() async throws {
        let connection = try await connect(redis, clientName: "richpush-stats")
        let stats = try await JobQueue(redis: connection, configuration: queue.configuration).stats()
        await connection.close()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(stats), as: UTF8.self))
            return
        }
        print("""
        stream length      \(stats.length)
        lag (undelivered)  \(stats.lag)
        pending            \(stats.pending) (oldest \(stats.oldestPendingAgeMilliseconds) ms)
        delayed retries    \(stats.delayed)
        dead letters       \(stats.deadLetters)
        processed          \(stats.processed)
        retried            \(stats.retried)
        failed (dropped)   \(stats.failed)
        dead-lettered      \(stats.deadLettered)
        consumers          \(stats.consumers.count)
        """)
        for consumer in stats.consumers {
            print("  \(consumer.name)  pending \(consumer.pending)  idle \(consumer.idleMilliseconds) ms")
        }
    }
}

/// Connects for a one-shot command, turning a Redis failure into one clear line.
func connect(_ options: RedisOptions, clientName: String) async throws -> RedisConnection {
    let configuration = try options.configuration(clientName: clientName)
    do {
        return try await RedisConnection.connect(configuration: configuration)
    } catch let error as RedisError {
        throw CLIError("cannot reach Redis at \(configuration.redactedURL): \(error.message)")
    }
}
