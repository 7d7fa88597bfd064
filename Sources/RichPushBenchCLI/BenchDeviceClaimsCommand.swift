import ArgumentParser
import Foundation
import Hiredis
import RichPushCommands
import RichPushStorage

/// `richpush bench device-claims`: the Redis time of a round's device claim and release
/// (``RedisDeviceBackOffs``), per device, from the server's own command statistics: rounds of
/// distinct devices with tokens shaped like APNs', each claimed and then released, on a Redis used
/// by nothing else (the statistics are reset before each phase).
struct BenchDeviceClaimsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-claims", abstract: "Measure the Redis time of claiming and releasing a round's devices.")

    @OptionGroup var redis: RedisOptions
    @Option(help: "Rounds to claim and release.") var rounds = 200
    @Option(help: "Devices per round.") var devices = 1_000
    @Option(help: "Key prefix (the run's keys are deleted at the end).") var prefix = "bench-claims"

    func validate() throws {
        guard rounds > 0, devices > 0, devices <= 10_000 else { throw ValidationError("--rounds must be positive and --devices 1-10000") }
    }

    func run() async throws {
        let connection = try await RedisConnection.connect(configuration: try redis.configuration(clientName: "richpush-bench"))
        let keys = StorageKeys(prefix: prefix)
        let backOffs = RedisDeviceBackOffs(redis: connection, keys: keys)
        let names = (0..<rounds).map { round in
            (0..<devices).map { "apns:" + String(format: "%064x", round * devices + $0) }
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var result: [String: Double] = [:]
        for phase in ["claim", "release"] {
            try await connection.send("CONFIG", "RESETSTAT").throwingError()
            for (round, devices) in names.enumerated() {
                let owner = "bench-\(round)"
                if phase == "claim" {
                    let refused = try await backOffs.claim(devices, owner: owner, now: now, until: now + 60_000)
                    guard refused.isEmpty else {
                        throw ValidationError("\(refused.count) devices were not claimed: is the Redis used by something else?")
                    }
                } else {
                    try await backOffs.release(devices, owner: owner, holding: [:], now: now)
                }
            }
            result[phase] = try await Self.microsecondsPerCall(connection) / Double(devices)
        }
        try await connection.send("DEL", "\(prefix):device-backoff", "\(prefix):device-claims:{\(prefix):device-backoff}").throwingError()
        await connection.close()
        let claim = String(format: "%.2f", result["claim"] ?? 0)
        let release = String(format: "%.2f", result["release"] ?? 0)
        print(
            #"{"rounds":\#(rounds),"devicesPerRound":\#(devices),"claimMicrosecondsPerDevice":\#(claim),"releaseMicrosecondsPerDevice":\#(release)}"#
        )
    }

    /// Redis's microseconds per script call since the statistics were reset (`EVALSHA` or `EVAL`).
    static func microsecondsPerCall(_ connection: RedisConnection) async throws -> Double {
        let info = try await connection.send("INFO", "commandstats").throwingError().string ?? ""
        var calls = 0.0
        var microseconds = 0.0
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_evalsha:") || line.hasPrefix("cmdstat_eval:") {
            for field in line.split(separator: ":", maxSplits: 1).last?.split(separator: ",") ?? [] {
                let pair = field.split(separator: "=")
                guard pair.count == 2, let value = Double(pair[1]) else { continue }
                if pair[0] == "calls" { calls += value } else if pair[0] == "usec" { microseconds += value }
            }
        }
        guard calls > 0 else { throw ValidationError("Redis counted no script call") }
        return microseconds / calls
    }
}
