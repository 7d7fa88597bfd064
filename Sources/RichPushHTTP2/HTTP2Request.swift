/// One request for ``HTTP2Client``: always `POST` to the client's endpoint, with its path, its
/// own headers (in order, each with how HPACK should keep it) and its body. `:method`, `:scheme`,
/// `:authority`, `authorization` and `content-length` are added by the connection.
package struct HTTP2Request: Sendable, Hashable {
    package struct Header: Sendable, Hashable {
        package let name: String
        package let value: String
        /// Whether the value may go into the connection's HPACK table.
        package let indexing: Indexing

        package init(name: String, value: String, indexing: Indexing = .always) {
            self.name = name
            self.value = value
            self.indexing = indexing
        }
    }

    package enum Indexing: Sendable, Hashable {
        /// The same value on every request (content-type, a topic): indexed once, then an index.
        case always
        /// A new value on every request (an id): indexed the first time on a connection, so the
        /// name is in the table, and a literal without indexing afterwards (Apple's advice for
        /// APNs' small table).
        case firstTimeOnly
        /// Never indexed (a device token in the path, a credential).
        case never
    }

    package let path: String
    package let headers: [Header]
    package let body: [UInt8]
    /// Who it is for (a device token), so that an answer saying that recipient is gone stops the
    /// batch's other requests to it (``HTTP2Halt``); nil: not said.
    package let recipient: String?

    package init(path: String, headers: [Header], body: [UInt8], recipient: String? = nil) {
        self.path = path
        self.headers = headers
        self.body = body
        self.recipient = recipient
    }
}

/// The client cannot do what it was asked: a bad endpoint, no connection, shut down.
package struct HTTP2ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
