package import Foundation
package import Hiredis

/// A private Redis Cluster for one test (scripts/cluster.sh): 3 masters, 3 replicas on free
/// loopback ports, files in a temporary directory, every server stopped at the end.
package struct LocalRedisCluster: Sendable {
    package let directory: URL
    /// Masters first, then replicas.
    package let ports: [Int]
    package var masterPorts: [Int] { Array(ports.prefix(3)) }

    package var url: String { "redis+cluster://" + masterPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",") }

    package var configuration: RedisClusterConfiguration {
        RedisClusterConfiguration(
            seeds: masterPorts.map { ClusterNode(host: "127.0.0.1", port: $0) },
            node: RedisConfiguration(
                connectTimeout: .seconds(1), commandTimeout: .seconds(3), reconnectBackoff: .milliseconds(10)...(.milliseconds(200))))
    }

    static var script: String {
        // Tests/RedisTestSupport/RedisCluster.swift → repository root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/cluster.sh").path
    }

    static func start() async throws -> LocalRedisCluster {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("richpush-cluster-\(UUID().uuidString.prefix(8))")
        let result = try await runScript(
            [script, "start", "--dir", directory.path], log: URL(fileURLWithPath: directory.path + ".start.log"))
        guard result.status == 0, let ports = try? String(contentsOf: directory.appendingPathComponent("ports"), encoding: .utf8) else {
            throw RedisServerError("scripts/cluster.sh start failed: \(result.output)")
        }
        return LocalRedisCluster(directory: directory, ports: ports.split(separator: "\n").compactMap { Int($0) })
    }

    func stop() async {
        _ = try? await runScript([Self.script, "stop", "--dir", directory.path], log: URL(fileURLWithPath: directory.path + ".stop.log"))
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(atPath: directory.path + ".start.log")
        try? FileManager.default.removeItem(atPath: directory.path + ".stop.log")
        try? FileManager.default.removeItem(atPath: directory.path + ".restart.log")
    }

    /// Starts again the node on `port` after it was killed (after a failover it rejoins as a replica).
    package func restartNode(_ port: Int) async throws {
        let result = try await runScript(
            [Self.script, "restart-node", "--dir", directory.path, "--port", "\(port)"],
            log: URL(fileURLWithPath: directory.path + ".restart.log"))
        guard result.status == 0 else { throw RedisServerError("restarting the node on port \(port) failed: \(result.output)") }
    }

    /// Runs `redis-cli` with these arguments against a node; its output.
    package func cli(_ port: Int, _ arguments: [String]) async throws -> String {
        try await runTool("/usr/bin/redis-cli", ["-p", String(port)] + arguments).output
    }

    /// The PID of the server on `port` (to kill it).
    package func pid(of port: Int) throws -> Int32 {
        for index in 0..<ports.count {
            let node = directory.appendingPathComponent("node-\(index)")
            guard let text = try? String(contentsOf: node.appendingPathComponent("port"), encoding: .utf8),
                Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) == port
            else { continue }
            let pid = try String(contentsOf: node.appendingPathComponent("redis.pid"), encoding: .utf8)
            return Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        throw RedisServerError("no node on port \(port)")
    }
}

/// Runs a bash script that starts daemons to its end, on swift-subprocess (its output in a file:
/// the daemons keep what they inherit open, and a pipe would never reach EOF).
func runScript(_ arguments: [String], log: URL) async throws -> (status: Int32, output: String) {
    let process = try await ChildProcess(executable: URL(fileURLWithPath: "/bin/bash"), arguments: arguments, logFile: log)
    guard let status = try await process.wait(timeout: .seconds(120)) else {
        process.signal(SIGKILL)
        throw RedisServerError("\(arguments.joined(separator: " ")) did not finish in 120 s")
    }
    return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
}

/// Runs `body` with a fresh local cluster, stopped afterwards whatever happens.
package func withRedisCluster<T>(_ body: (LocalRedisCluster) async throws -> T) async throws -> T {
    let cluster = try await LocalRedisCluster.start()
    do {
        let result = try await body(cluster)
        await cluster.stop()
        return result
    } catch {
        await cluster.stop()
        throw error
    }
}
