package import Logging

/// A connection of one's own to the node that serves one key, for blocking reads: made on first
/// use and, on Redis Cluster, made again on the key's new node after a failover or a reshard.
package actor RedisReaderConnection {
    private let locator: RedisNodeLocator
    private let key: String
    private let timeout: Duration
    private let suffix: String
    private let logger: Logger
    private var current: RedisConnection?

    /// `timeout` is the command timeout (above the longest block time); `suffix` is appended to
    /// the client name (`richpush-worker-reader`).
    package init(locator: RedisNodeLocator, key: String, timeout: Duration, suffix: String, logger: Logger) {
        self.locator = locator
        self.key = key
        self.timeout = timeout
        self.suffix = suffix
        self.logger = logger
    }

    package func connection() async throws -> RedisConnection {
        if let current { return current }
        var configuration = try await locator.configuration(forKey: key)
        configuration.commandTimeout = timeout
        configuration.clientName = configuration.clientName.map { "\($0)-\(suffix)" } ?? "richpush-\(suffix)"
        let connection = RedisConnection(configuration: configuration, logger: logger)
        current = connection
        return connection
    }

    /// A read failed: on Redis Cluster, when the error says the key may have moved, the
    /// connection is dropped and the slot map read again, so the next read goes to the key's
    /// node now. (One Redis: the connection reconnects by itself.)
    package func failed(_ error: any Error) async {
        guard case .cluster = locator, RedisNodeLocator.suggestsRelocation(error), let connection = current else { return }
        current = nil
        logger.info("reader relocating", metadata: ["key": "\(key)", "error": "\(error)"])
        await connection.close()
        await locator.invalidate()
    }

    package func close() async {
        await current?.close()
        current = nil
    }
}
