/// One request for ``HTTP2Client``: always `POST` to the client's endpoint, with its path, its
/// own headers (in order, each with how HPACK should keep it) and its body. `:method`, `:scheme`,
/// `:authority`, `authorization` and `content-length` are added by the connection.
public struct HTTP2Request: Sendable, Hashable {
    public struct Header: Sendable, Hashable {
        public let name: String
        public let value: String
        /// Whether the value may go into the connection's HPACK table.
        public let indexing: Indexing

        public init(name: String, value: String, indexing: Indexing = .always) {
            self.name = name
            self.value = value
            self.indexing = indexing
        }
    }

    public enum Indexing: Sendable, Hashable {
        /// The same value on every request (content-type, a topic): indexed once, then an index.
        case always
        /// A new value on every request (an id): indexed the first time on a connection, so the
        /// name is in the table, and a literal without indexing afterwards (Apple's advice for
        /// APNs' small table).
        case firstTimeOnly
        /// Never indexed (a device token in the path, a credential).
        case never
    }

    public let path: String
    public let headers: [Header]
    public let body: [UInt8]
    /// Who it is for (a device token), so that an answer saying that recipient is gone stops the
    /// batch's other requests to it (``HTTP2Halt``); nil: not said.
    public let recipient: String?

    public init(path: String, headers: [Header], body: [UInt8], recipient: String? = nil) {
        self.path = path
        self.headers = headers
        self.body = body
        self.recipient = recipient
    }
}

/// The client cannot do what it was asked: a bad endpoint, no connection, shut down.
public struct HTTP2ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
