import ArgumentParser
import Foundation
import Hiredis
import RichPushCommands

/// `richpush bench redis`: this client's rate for XADD or PUBLISH on one connection, in the shape
/// of `redis-benchmark -c 1 -P <pipeline>` so that scripts/bench-redis.sh can compare the two.
struct BenchRedisCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis", abstract: "Measure the Redis client: XADD or PUBLISH ops/s on one connection.")

    enum Operation: String, ExpressibleByArgument, CaseIterable { case xadd, publish }

    @OptionGroup var redis: RedisOptions
    @Option(help: "Command to measure: \(Operation.allCases.map(\.rawValue).joined(separator: ", ")).") var command: Operation = .xadd
    @Option(help: "Number of commands to send.") var requests = 100_000
    @Option(help: "Commands per pipelined batch; 1 waits for each reply before the next command.") var pipeline = 1
    @Option(help: "Key (XADD) or channel (PUBLISH).") var key = "bench:richpush"
    @Option(help: "Microseconds the connection's thread spins for more work before sleeping (threads transport).") var idleSpin = 0
    @Flag(help: "Run the loop on the connection's own thread or event loop (withTaskExecutorPreference), as the worker's fetch loop does.")
    var onConnectionThread = false

    func validate() throws {
        guard requests > 0 else { throw ValidationError("--requests must be positive") }
        guard pipeline > 0 else { throw ValidationError("--pipeline must be positive") }
    }

    func run() async throws {
        var configuration = try redis.configuration(clientName: "richpush-bench")
        configuration.idleSpin = .microseconds(idleSpin)
        let connection = try await redis.transport.connect(configuration: configuration)
        let request: RedisCommand =
            switch command {
            case .xadd: RedisCommand("XADD", key, "*", "field", "value")
            case .publish: RedisCommand("PUBLISH", key, "value")
            }
        // Warm up the connection and the thread before timing.
        _ = try await connection.pipeline(Array(repeating: request, count: min(requests, 1000)))
        let batch = Array(repeating: request, count: pipeline)
        let clock = ContinuousClock()
        var sent = 0
        let body = {
            while sent < requests {
                if pipeline == 1 {
                    try await connection.send(request)
                    sent += 1
                } else {
                    let count = min(pipeline, requests - sent)
                    let replies = try await connection.pipeline(count == pipeline ? batch : Array(batch.prefix(count)))
                    if let failure = replies.first(where: { $0.errorMessage != nil }) { try failure.throwingError() }
                    sent += count
                }
            }
        }
        let elapsed = try await clock.measure {
            if onConnectionThread {
                try await withTaskExecutorPreference(connection, operation: body)
            } else {
                try await body()
            }
        }
        await connection.close(interrupt: false)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(String(format: "%.0f", Double(sent) / seconds))
    }
}
