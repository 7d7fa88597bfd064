package import NIOSSL
import RichPushHTTP2
import Synchronization

/// HTTP/2 connections to push services, one ``HTTP2Client`` per origin, made at the origin's first
/// push and kept: browsers' pushes go to a handful of services (Google's, Mozilla's, Apple's,
/// Microsoft's), each of which takes many streams on one connection. An idle client holds no
/// connection once the service closes it.
package final class WebPushConnections: Sendable {
    private let clients = Mutex<[String: HTTP2Client]>([:])
    let trustRoots: [NIOSSLCertificate]?
    let connections: Int
    let timeout: Duration
    /// Past this many origins, no new client is made (the endpoint is refused, not a connection
    /// opened per stray origin).
    static let maxOrigins = 256

    package init(trustRoots: [NIOSSLCertificate]? = nil, connections: Int = 2, timeout: Duration = .seconds(10)) {
        self.trustRoots = trustRoots
        self.connections = max(1, connections)
        self.timeout = timeout
    }

    /// The client of `origin` (`https://host[:port]`).
    func client(for origin: String) throws -> HTTP2Client {
        try clients.withLock { clients in
            if let client = clients[origin] { return client }
            guard clients.count < Self.maxOrigins else { throw HTTP2ClientError("more than \(Self.maxOrigins) push service origins") }
            let configuration = HTTP2Client.Configuration(
                endpoint: try HTTP2Client.Endpoint(url: origin), trustRoots: trustRoots, connections: connections,
                requestTimeout: timeout, responseIDHeader: "location")
            let client = try HTTP2Client(configuration: configuration)
            clients[origin] = client
            return client
        }
    }

    /// Closes every connection (the worker is stopping).
    package func shutdown() {
        for client in clients.withLock({ $0.values }) { client.shutdown() }
    }
}
