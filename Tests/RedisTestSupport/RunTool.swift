import Foundation

/// Runs a short command-line tool to its end (docker-compose config, openssl verify, redis-cli,
/// `--help`) and returns its exit status and its output (stdout and stderr together).
///
/// On swift-subprocess (``ChildProcess``), whose wait holds no thread: a blocking wait on Swift's
/// cooperative pool (2 threads here) holds back every test running beside it, and a `redis-cli
/// --cluster reshard` or a docker-compose start takes seconds on a busy machine (CI saw 5 and 10 s
/// HTTP deadlines pass at the test run's start). Not Foundation's Process: its run() crashed the
/// test process now and then (swift-corelibs-foundation#5472, a read past a buffer while it lists
/// /proc/self/fd).
package func runTool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("richpush-tool-\(UUID().uuidString.prefix(8)).out")
    defer { try? FileManager.default.removeItem(at: output) }
    let process = try await ChildProcess(executable: URL(fileURLWithPath: path), arguments: arguments, logFile: output)
    guard let status = try await process.wait(timeout: .seconds(600)) else {
        process.signal(SIGKILL)
        _ = try await process.wait(timeout: .seconds(10))
        throw RedisServerError(
            "\(path) \(arguments.joined(separator: " ")) did not end in 10 minutes; its output: \(process.log.suffix(2000))")
    }
    return (status, process.log)
}
