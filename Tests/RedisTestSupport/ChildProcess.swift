public import Foundation

/// A process the test starts (a `richpush worker`, say) with a clean signal mask and default
/// signal handlers, its output in a log file, and real signals to stop or kill it.
///
/// Not Foundation's `Process`: a child spawned from a Dispatch thread inherits that thread's
/// signal mask, in which SIGTERM is blocked, and then never sees the SIGTERM a test sends.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `status` is only written by wait(), which the owning test calls sequentially.
    public let pid: pid_t
    public let logFile: URL
    private var status: Int32?

    /// `environment` is added to (or overrides) this process's environment.
    public init(executable: URL, arguments: [String], environment: [String: String] = [:], logFile: URL) throws {
        self.logFile = logFile
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile.path, O_WRONLY | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, logFile.path, O_WRONLY | O_APPEND, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw RedisServerError("cannot start \(executable.path): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the process to exit and returns its exit status (128+signal if killed), or nil on timeout.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) async throws -> Int32? {
        if let status { return status }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                status = code
                return code
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}

/// The `richpush` executable built beside the test bundle (or `RICHPUSH_BIN`).
public func richpushExecutable() throws -> URL {
    if let path = ProcessInfo.processInfo.environment["RICHPUSH_BIN"] { return URL(fileURLWithPath: path) }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent("richpush")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw RedisServerError("the richpush executable is not built next to the tests; run `swift build --build-tests` (scripts/test.sh does) or set RICHPUSH_BIN")
}
