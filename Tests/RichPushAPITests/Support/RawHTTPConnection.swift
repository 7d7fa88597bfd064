import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request over a plain loopback socket, read as its bytes arrive, and closed when
/// the test says (with a reset, as a browser tab that is closed mid-answer): what a test client
/// that collects whole answers cannot do. Blocking reads run on a Dispatch thread, never on the
/// cooperative pool; each read waits at most 60 s. ``reset()`` once done (a second call does nothing).
final class RawHTTPConnection: Sendable {
    private let socket: Int32
    private let isClosed = Mutex(false)

    private init(socket: Int32) { self.socket = socket }

    /// Connects to 127.0.0.1:`port` and sends `request` whole.
    static func send(_ request: String, port: Int) async throws -> RawHTTPConnection {
        try await onThread {
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw RawHTTPError("socket() failed") }
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            let bytes = Array(request.utf8)
            guard connected, write(fd, bytes, bytes.count) == bytes.count else {
                close(fd)
                throw RawHTTPError("cannot send to port \(port)")
            }
            return RawHTTPConnection(socket: fd)
        }
    }

    /// Reads until what was read holds `text`; all that was read.
    func read(until text: String) async throws -> String {
        try await Self.onThread { [socket] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains(text) {
                let count = Glibc.read(socket, &buffer, buffer.count)
                guard count > 0 else {
                    throw RawHTTPError(
                        "the answer ended (or 60 s passed) before '\(text)': \(String(decoding: received, as: UTF8.self).suffix(300))")
                }
                received += buffer.prefix(count)
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Closes the socket at once with a reset (`SO_LINGER` 0): the server's next write fails.
    func reset() {
        guard
            !isClosed.withLock({ closed in
                defer { closed = true }; return closed
            })
        else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(socket)
    }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}

struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
