import Foundation
import Synchronization

/// Stops what the tests started when the test process dies without stopping it (killed by
/// `timeout` or `pkill`, or crashed): otherwise its redis-servers and `richpush` children live on,
/// holding ports and, through `swift test`, the build directory's lock.
///
/// A watchdog shell reads lines `PID MARKER` from a pipe whose only writer is this process (the
/// write end is close-on-exec, so no child holds it). At end of file, when this process is gone
/// however it ended, the watchdog kills every listed process whose command line still contains its
/// marker (or, for a marker `cwd:DIR`, whose working directory is DIR: redis-server rewrites its
/// command line to `redis-server 127.0.0.1:PORT`), so a PID the system has since given to
/// another process is never hit. A test process
/// that stopped everything itself leaves the watchdog nothing to kill; it then exits on its own.
package enum Lifeline {
    private static let writer: Mutex<Int32?> = Mutex(start())

    /// Watches `pid`, whose command line contains `marker` (a path or argument of its own), or
    /// whose working directory is DIR for a marker `cwd:DIR`.
    package static func watch(pid: Int32, marker: String) {
        let line = "\(pid) \(marker.replacingOccurrences(of: "\n", with: " "))\n"
        writer.withLock { descriptor in
            guard let fd = descriptor else { return }
            let bytes = Array(line.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    private static let script = """
        while read -r pid marker; do set -- "$@" "$pid:$marker"; done
        for entry in "$@"; do
            pid=${entry%%:*}; marker=${entry#*:}
            case $marker in
            cwd:*) [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "${marker#cwd:}" ] && kill -9 "$pid" 2>/dev/null ;;
            *) tr '\\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$marker" && kill -9 "$pid" 2>/dev/null ;;
            esac
        done
        """

    private static func start() -> Int32? {
        var fds: [Int32] = [0, 0]
        // (pipe2 with O_CLOEXEC is not in Swift's Glibc module: a child spawned between these
        // calls would hold the write end, and the watchdog would then wait for that child too.)
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardInput = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        do {
            try watchdog.run()
        } catch {
            close(fds[0])
            close(fds[1])
            return nil
        }
        return fds[1]
    }
}
