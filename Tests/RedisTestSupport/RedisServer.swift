package import Foundation
package import Hiredis

/// A private `redis-server` for one test: a free loopback port, a temporary directory, no
/// persistence unless asked, stopped at the end. Tests that kill or restart Redis own theirs.
package final class RedisServer: @unchecked Sendable {
    // @unchecked: `process` is only replaced by start/stop/kill, which a test calls sequentially.
    package private(set) var port: Int
    package let directory: URL
    package let appendOnly: Bool
    private let extraArguments: [String]
    private var process: ChildProcess?

    /// Starts a server; fails with install instructions when `redis-server` is missing.
    package init(appendOnly: Bool = false, arguments: [String] = []) async throws {
        self.appendOnly = appendOnly
        self.extraArguments = arguments
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("richpush-redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = 0
        var lastError: (any Error)?
        // A free port can be taken by someone else between the probe and redis-server's bind: retry.
        for _ in 0..<5 {
            let port = try Self.freePort()
            do {
                self.port = port
                try await start()
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? RedisServerError("could not start redis-server")
    }

    package var url: String { "redis://127.0.0.1:\(port)/0" }

    /// The tests' own connections: a reply may wait seconds while every suite of the package runs
    /// on 2 cores (a 5 s command timeout failed `PoolTests` and `NIOConnectionTests` under
    /// `scripts/test.sh`), so 30 s; a test of timeouts sets its own.
    package var configuration: RedisConfiguration {
        RedisConfiguration(
            host: "127.0.0.1", port: port, connectTimeout: .seconds(10), commandTimeout: .seconds(30),
            reconnectBackoff: .milliseconds(10)...(.milliseconds(200)))
    }

    /// How many times the server ran `name` (lower case, e.g. `hincrby`), inside scripts too,
    /// since it started or `CONFIG RESETSTAT` (`INFO commandstats`).
    package func commandCalls(_ name: String) async throws -> Int {
        let stats = try await probe("INFO", "commandstats").string ?? ""
        guard let line = stats.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(name):") }),
            let value = line.split(separator: ":calls=").dropFirst().first?.split(separator: ",").first
        else { return 0 }
        return Int(value) ?? 0
    }

    /// Runs one command on a fresh connection that is closed afterwards (for probes in tests).
    @discardableResult
    package func probe(_ name: String, _ arguments: any RedisArgument...) async throws -> RedisValue {
        let connection = try await RedisConnection.connect(configuration: configuration)
        do {
            let reply = try await connection.send(RedisCommand(name, arguments: arguments))
            await connection.close()
            return reply
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Starts (or restarts, on the same port and directory) and waits until it answers PING.
    package func start() async throws {
        let executable = try Self.locateRedisServer()
        // On swift-subprocess, not Foundation's Process: Process.run() in Swift 6.3.1 reads past
        // a buffer while it lists /proc/self/fd, and with the thousand descriptors of a full test
        // run it crashed the test process now and then (swift-corelibs-foundation#5472).
        let process = try await ChildProcess(
            executable: executable,
            arguments: [
                "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory.path,
                "--save", "", "--appendonly", appendOnly ? "yes" : "no", "--appendfsync", "everysec",
                "--daemonize", "no", "--logfile", directory.appendingPathComponent("redis.log").path,
                "--protected-mode", "no", "--pidfile", directory.appendingPathComponent("redis.pid").path,
            ] + extraArguments, logFile: directory.appendingPathComponent("redis.out"))
        self.process = process
        // redis-server rewrites its command line (`redis-server 127.0.0.1:PORT`) and moves into
        // --dir: the lifeline knows it by that directory.
        Lifeline.watch(pid: process.pid, marker: "cwd:\(directory.resolvingSymlinksInPath().path)")
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                throw RedisServerError(
                    "redis-server exited at start (status \(process.exitStatus.map(String.init) ?? "unknown")); log: \(log.suffix(500))")
            }
            if Self.answersPing(port: port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        // Not left running: `init` tries another port, and on a machine too busy to answer in
        // 10 s every test leaked servers that made it busier still (hundreds in one run).
        let log = log
        kill()
        throw RedisServerError("redis-server on port \(port) did not answer within 10 s; log: \(log.suffix(500))")
    }

    /// Shuts Redis down (`SHUTDOWN NOSAVE`; SIGKILL if it has not exited within 5 s) and waits.
    ///
    /// Not SIGTERM: a child started from the test runner may inherit a signal mask that blocks it.
    package func stop() {
        guard let process, process.isRunning else { return }
        _ = Self.rawCommand("SHUTDOWN NOSAVE", port: port)
        if !Self.waitForExit(process, timeout: .seconds(5)) {
            process.signal(SIGKILL)
            _ = Self.waitForExit(process, timeout: .seconds(5))
        }
        self.process = nil
    }

    /// Kills with SIGKILL, as a crash would, and waits for the process to be gone.
    package func kill() {
        guard let process, process.isRunning else { return }
        process.signal(SIGKILL)
        _ = Self.waitForExit(process, timeout: .seconds(5))
        self.process = nil
    }

    private static func waitForExit(_ process: ChildProcess, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Stops the server and removes its directory without holding a thread of the 2-thread
    /// cooperative pool while Redis exits (a blocking wait in every test's teardown starved
    /// timing-sensitive tests running beside it).
    package func shutdownGently() async {
        if let process, process.isRunning {
            _ = Self.rawCommand("SHUTDOWN NOSAVE", port: port)
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        }
        shutdown()
    }

    /// Stops the server and removes its directory.
    package func shutdown() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        if let process, process.isRunning { process.signal(SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    package var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
    }

    static func locateRedisServer() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        for directory in candidates {
            let file = URL(fileURLWithPath: directory).appendingPathComponent("redis-server")
            if FileManager.default.isExecutableFile(atPath: file.path) { return file }
        }
        throw RedisServerError(
            "redis-server is not installed; these tests need a real Redis. Install it with `sudo apt-get install redis-server` (scripts/test.sh does this for you)."
        )
    }

    package static func freePort() throws -> Int {
        let (fd, port) = try loopbackSocket(listening: false)
        close(fd)
        return port
    }

    /// Runs `body` with a loopback port that refuses connections for as long as `body` runs: a
    /// socket bound to it without `SO_REUSEADDR` and never listening holds it, so no server
    /// started meanwhile (by this process or another) can take it. A port only found free and
    /// closed again can be taken by the next server any test starts, and then it answers.
    @discardableResult
    package static func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try loopbackSocket(listening: false)
        defer { close(fd) }
        return try await body(port)
    }

    /// A TCP socket bound to a free loopback port, listening (backlog 16) if asked: its descriptor
    /// (the caller closes it) and its port.
    package static func loopbackSocket(listening: Bool) throws -> (socket: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!listening || listen(fd, 16) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw RedisServerError("cannot find a free port")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A raw RESP PING over a plain socket, so that readiness does not depend on the client under test.
    static func answersPing(port: Int) -> Bool {
        rawCommand("PING", port: port)?.hasPrefix("+PONG") == true
    }

    /// Whether something accepts TCP connections on the loopback port (connect only, no read,
    /// so it never blocks the caller's thread waiting for an answer).
    package static func isListening(port: Int) -> Bool {
        guard let fd = connectLoopback(port: port) else { return false }
        close(fd)
        return true
    }

    /// Sends one inline command on a fresh socket and returns the start of the reply, or nil.
    static func rawCommand(_ command: String, port: Int) -> String? {
        guard let fd = connectLoopback(port: port) else { return nil }
        defer { close(fd) }
        // An answer within 5 s or none: a paused or stopped (SIGSTOP) server would hold the
        // caller, a thread of the cooperative pool in a teardown, until it resumed.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array((command + "\r\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
    }

    /// A socket connected to 127.0.0.1:port, or nil; the caller closes it.
    private static func connectLoopback(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }
}

package struct RedisServerError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh private server, and stops it whatever happens.
package func withRedisServer<T>(
    appendOnly: Bool = false, arguments: [String] = [], _ body: (RedisServer) async throws -> T
) async throws -> T {
    let server = try await RedisServer(appendOnly: appendOnly, arguments: arguments)
    do {
        let result = try await body(server)
        await server.shutdownGently()
        return result
    } catch {
        await server.shutdownGently()
        throw error
    }
}

/// A key prefix no other test uses, so tests can share one server without sharing keys.
package func uniqueKeyPrefix(_ name: String = "test") -> String {
    "\(name):\(UUID().uuidString.prefix(12)):"
}

/// Waits until `condition` holds, polling every 10 ms, or fails after `timeout`. A transient Redis
/// error (connection lost or refused while a test restarts its server) counts as "not yet".
package func waitUntil(timeout: Duration = .seconds(30), _ what: String = "condition", _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    var lastError: RedisError?
    while ContinuousClock.now < deadline {
        do {
            if try await condition() { return }
        } catch let error as RedisError where error.isTransient {
            lastError = error
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw RedisServerError("timed out after \(timeout) waiting for \(what)\(lastError.map { " (last error: \($0))" } ?? "")")
}

/// The thread running the caller (a synchronous function, so that async tests can ask).
package func currentThreadID() -> UInt {
    UInt(pthread_self())
}
