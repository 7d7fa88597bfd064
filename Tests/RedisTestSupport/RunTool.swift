import Foundation

/// Runs a short command-line tool to its end (docker-compose config, openssl verify, redis-cli,
/// `--help`) and returns its exit status and its output (stdout and stderr together).
///
/// The wait is on a thread of its own: a blocking wait on Swift's cooperative pool (2 threads
/// here) holds back every test running beside it, and a `redis-cli --cluster reshard` or a
/// docker-compose start takes seconds on a busy machine (CI saw 5 and 10 s HTTP deadlines pass
/// at the test run's start).
package func runTool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try runToolBlocking(path, arguments) })
        }.start()
    }
}

private func runToolBlocking(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
