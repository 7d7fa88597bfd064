package import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// A process the test starts (a `richpush worker`, say), on swift-subprocess: a clean signal mask
/// and default signal handlers (a child spawned from a Dispatch thread with Foundation's
/// `Process` inherits a mask in which SIGTERM is blocked, and never sees the SIGTERM a test
/// sends), its output in a log file, and real signals to stop or kill it.
///
/// swift-subprocess scopes a process to a closure; the closure here runs on a task of its own
/// until the process exits, so a test can hold several processes at once and signal each.
package final class ChildProcess: Sendable {
    typealias Handle = Execution<NoInput, FileDescriptorOutput, FileDescriptorOutput>

    package let pid: Int32
    package let logFile: URL
    private let execution: Handle
    /// The exit status once the process ended (or why it could not be watched).
    private let status = ExitStatus()

    /// `environment` is added to (or overrides) this process's environment.
    package init(executable: URL, arguments: [String], environment: [String: String] = [:], logFile: URL) async throws {
        self.logFile = logFile
        let log = try FileDescriptor.open(
            FilePath(logFile.path), .writeOnly, options: [.create, .append, .truncate],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
        var overrides: [Environment.Key: String?] = [:]
        for (key, value) in environment {
            guard let name = Environment.Key(rawValue: key) else { throw RedisServerError("bad environment variable name \(key)") }
            overrides[name] = value
        }
        let (started, handle) = AsyncThrowingStream.makeStream(of: Handle.self)
        let status = self.status
        Task {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: .inherit.updating(overrides),
                    input: .none, output: .fileDescriptor(log, closeAfterSpawningProcess: false),
                    error: .fileDescriptor(log, closeAfterSpawningProcess: false)
                ) { execution in
                    handle.yield(execution)
                    handle.finish()
                    // Stay in the body until the process has exited, so the handle (its pidfd)
                    // stays valid for every signal sent before that: a signal sent later could
                    // reach whatever reused the descriptor.
                    // Every 10 ms at first, then less often (up to 100 ms): a test run keeps a
                    // hundred redis-servers alive at once, each watched here for its whole test.
                    let pid = execution.processIdentifier.value
                    var interval = Duration.milliseconds(10)
                    while !status.markExitedIfDone(pid) {
                        try await Task.sleep(for: interval)
                        interval = min(interval * 5 / 4, .milliseconds(100))
                    }
                }
                try log.close()
                let code =
                    switch result.terminationStatus {
                    case .exited(let code): code
                    case .signaled(let signal): 128 + signal
                    }
                status.value.withLock { $0 = .success(code) }
            } catch {
                handle.finish(throwing: error)
                try? log.close()
                status.value.withLock { $0 = .failure(error) }
            }
        }
        var iterator = started.makeAsyncIterator()
        guard let execution = try await iterator.next() else { throw RedisServerError("cannot start \(executable.path)") }
        self.execution = execution
        self.pid = execution.processIdentifier.value
        Lifeline.watch(pid: pid, marker: ([executable.path] + arguments).joined(separator: " "))
    }

    package func signal(_ signal: Int32) {
        let execution = execution
        // Only while it runs (decided under the same lock the watcher marks the exit with).
        status.whileRunning { try? execution.send(signal: Signal(rawValue: signal)) }
    }

    /// Waits for the process to exit and returns its exit status (128+signal if killed), or nil on timeout.
    @discardableResult
    package func wait(timeout: Duration = .seconds(30)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let result = status.value.withLock({ $0 }) { return try result.get() }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    package var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Whether the process has not exited yet (asked of the system, not of the watcher).
    package var isRunning: Bool { !status.markExitedIfDone(pid) }

    /// The exit status (128+signal if killed) once the watcher has seen the process end.
    package var exitStatus: Int32? { try? status.value.withLock { $0 }?.get() }

    deinit {
        // A test that did not wait for its process: kill it (swift-subprocess reaps it).
        let execution = execution
        status.whileRunning { try? execution.send(signal: .kill) }
    }
}

/// Where the watching task leaves the exit status, and whether the process still runs.
final class ExitStatus: Sendable {
    let value = Mutex<Result<Int32, any Error>?>(nil)
    private let exited = Mutex(false)

    /// Runs `body` unless the process was seen to exit.
    func whileRunning(_ body: () -> Void) {
        exited.withLock { exited in if !exited { body() } }
    }

    /// Whether `pid` has exited (a zombie not yet reaped, or already reaped); marks it so.
    func markExitedIfDone(_ pid: Int32) -> Bool {
        exited.withLock { exited in
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if result != 0 || info._sifields._sigchld.si_pid != 0 { exited = true }
            return exited
        }
    }
}

/// The `richpush` executable built beside the test bundle (or `RICHPUSH_BIN`).
package func richpushExecutable() throws -> URL {
    try builtExecutable("richpush", environment: "RICHPUSH_BIN")
}

/// The `richpush-bench` executable built beside the test bundle (or `RICHPUSH_BENCH_BIN`): its
/// `worker` is `richpush worker` with the `probe` and `noop` job types the queue's tests run.
package func richpushBenchExecutable() throws -> URL {
    try builtExecutable("richpush-bench", environment: "RICHPUSH_BENCH_BIN")
}

private func builtExecutable(_ name: String, environment: String) throws -> URL {
    if let path = ProcessInfo.processInfo.environment[environment] { return URL(fileURLWithPath: path) }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw RedisServerError(
        "the \(name) executable is not built next to the tests; run `swift build --build-tests` (scripts/test.sh does) or set \(environment)"
    )
}
