import Hummingbird
import NIOCore

extension Request {
    /// The whole body, at most `limit` bytes (413 above), arrived within `timeout` (408 after):
    /// a client that trickles its body cannot hold a request open for long.
    func collectBody(upTo limit: Int, within timeout: Duration) async throws -> ByteBuffer {
        let body = self.body
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else {
                throw APIError(.requestTimeout, code: "body_timeout", message: "the request body did not arrive within \(timeout)",
                               headers: [.connection: "close"])
            }
            return buffer
        }
    }
}
