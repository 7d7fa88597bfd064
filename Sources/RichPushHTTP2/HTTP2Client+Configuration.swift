package import NIOSSL

extension HTTP2Client {
    /// Where the server is: `https://host[:port]`, or `http://host:port` (cleartext HTTP/2 with
    /// prior knowledge, for a local simulator only, and only when the caller allows it).
    package struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        package let host: String
        package let port: Int
        package let usesTLS: Bool

        package init(host: String, port: Int, usesTLS: Bool) {
            self.host = host
            self.port = port
            self.usesTLS = usesTLS
        }

        package init(url text: String, allowCleartext: Bool = false) throws(HTTP2ClientError) {
            let usesTLS: Bool
            let rest: Substring
            if text.hasPrefix("https://") {
                (usesTLS, rest) = (true, text.dropFirst(8))
            } else if text.hasPrefix("http://") {
                guard allowCleartext else {
                    throw HTTP2ClientError("\(text) is cleartext HTTP/2: allow it explicitly, for a local simulator only")
                }
                (usesTLS, rest) = (false, text.dropFirst(7))
            } else {
                throw HTTP2ClientError("the URL must be https://host[:port] or http://host:port, not '\(text)'")
            }
            let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let host: Substring
            var port = usesTLS ? 443 : 80
            if authority.hasPrefix("[") {
                // [IPv6]:port
                guard let close = authority.firstIndex(of: "]") else { throw HTTP2ClientError("bad IPv6 address in '\(text)'") }
                host = authority[authority.index(after: authority.startIndex)..<close]
                let tail = authority[authority.index(after: close)...]
                if tail.hasPrefix(":") { port = try Self.port(tail.dropFirst(), in: text) }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                port = try Self.port(authority[authority.index(after: colon)...], in: text)
            } else {
                host = authority
            }
            guard !host.isEmpty else { throw HTTP2ClientError("no host in the URL '\(text)'") }
            self.init(host: String(host), port: port, usesTLS: usesTLS)
        }

        private static func port(_ text: Substring, in url: String) throws(HTTP2ClientError) -> Int {
            guard let port = Int(text), (1...65535).contains(port) else { throw HTTP2ClientError("bad port in the URL '\(url)'") }
            return port
        }

        package var description: String { "\(usesTLS ? "https" : "http")://\(host):\(port)" }
    }

    /// How the client connects; defaults suit Apple's and Google's servers.
    package struct Configuration: Sendable {
        package var endpoint: Endpoint
        /// Certificates to trust instead of the system's (a local simulator's CA).
        package var trustRoots: [NIOSSLCertificate]?
        /// HTTP/2 connections kept open; each carries as many streams as the server allows
        /// (Apple: up to 1,000), so two already give thousands of pushes in flight.
        package var connections: Int
        /// How long one request may take before its stream is cancelled and it counts as failed.
        package var requestTimeout: Duration
        /// How long a connection that said nothing since a timed-out request began has to answer
        /// a PING before it is closed as dead (RFC 9113 §6.7); `nil`: `requestTimeout`.
        package var pingTimeout: Duration?
        package var connectTimeout: Duration
        /// How many times a request APNs did not process (GOAWAY, `REFUSED_STREAM`) is sent
        /// again on another connection before the push is handed back as a retryable failure.
        package var unprocessedRetries: Int
        /// The wait before connecting again after a failure, doubling per failure up to
        /// `maxReconnectDelay`, with jitter.
        package var minReconnectDelay: Duration
        package var maxReconnectDelay: Duration
        /// The answer header reported as an exchange's `responseID` (`apns-id` for APNs).
        package var responseIDHeader: String?

        package init(
            endpoint: Endpoint, trustRoots: [NIOSSLCertificate]? = nil, connections: Int = 2, requestTimeout: Duration = .seconds(10),
            connectTimeout: Duration = .seconds(10), unprocessedRetries: Int = 10, minReconnectDelay: Duration = .milliseconds(100),
            maxReconnectDelay: Duration = .seconds(30), responseIDHeader: String? = nil, pingTimeout: Duration? = nil
        ) {
            self.responseIDHeader = responseIDHeader
            self.pingTimeout = pingTimeout
            self.endpoint = endpoint
            self.trustRoots = trustRoots
            self.connections = max(1, connections)
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
            self.unprocessedRetries = max(0, unprocessedRetries)
            self.minReconnectDelay = minReconnectDelay
            self.maxReconnectDelay = max(minReconnectDelay, maxReconnectDelay)
        }
    }
}
