package import ArgumentParser
import Foundation
package import Hiredis
package import Logging
package import ServiceLifecycle

/// The Redis connection options every subcommand shares.
package struct RedisOptions: ParsableArguments {
    @Option(
        name: .customLong("redis-url"),
        help: ArgumentHelp(
            """
            Redis URL, redis://[user:password@]host[:port][/db], or for Redis Cluster \
            redis+cluster://[user:password@]host:port[,host:port…] (any nodes; the rest are discovered) \
            (env RICHPUSH_REDIS_URL; default \(RedisConfiguration.defaultURL)).
            """,
            valueName: "url"))
    package var redisURL: String?

    @Option(name: .customLong("redis-timeout"), help: "Seconds to wait for a Redis reply before dropping the connection.")
    package var redisTimeout: Double = 5

    @Option(
        name: .customLong("redis-transport"),
        help: ArgumentHelp(
            """
            How connections to one Redis carry requests: threads (a thread per connection) or nio \
            (SwiftNIO event loops) (env RICHPUSH_REDIS_TRANSPORT; default nio). A cluster always uses threads.
            """,
            valueName: "transport"))
    package var redisTransport: RedisTransport?

    package var transport: RedisTransport {
        get throws {
            if let redisTransport { return redisTransport }
            guard let name = ProcessInfo.processInfo.environment["RICHPUSH_REDIS_TRANSPORT"], !name.isEmpty else { return .nio }
            guard let transport = RedisTransport(rawValue: name) else {
                throw ValidationError(
                    "RICHPUSH_REDIS_TRANSPORT must be one of \(RedisTransport.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'"
                )
            }
            return transport
        }
    }

    package var url: String { redisURL ?? ProcessInfo.processInfo.environment["RICHPUSH_REDIS_URL"] ?? RedisConfiguration.defaultURL }

    package var isCluster: Bool { RedisClusterConfiguration.isClusterURL(url) }

    /// One node's settings: the URL's Redis, or on a cluster the first seed.
    package func configuration(clientName: String) throws -> RedisConfiguration {
        if isCluster {
            let cluster = try clusterConfiguration(clientName: clientName)
            return cluster.configuration(for: cluster.seeds[0])
        }
        var configuration = try RedisConfiguration(url: url)
        if configuration.clientName == nil { configuration.clientName = clientName }
        configuration.commandTimeout = .milliseconds(Int(redisTimeout * 1000))
        return configuration
    }

    package func clusterConfiguration(clientName: String, connectionsPerNode: Int = 2) throws -> RedisClusterConfiguration {
        var cluster = try RedisClusterConfiguration(url: url)
        if cluster.node.clientName == nil { cluster.node.clientName = clientName }
        cluster.node.commandTimeout = .milliseconds(Int(redisTimeout * 1000))
        cluster.connectionsPerNode = connectionsPerNode
        return cluster
    }

    /// The shared connections of a long-running process: a pool of `connections`, or on a
    /// cluster a client with `connections` per node; run `backend.service` in the process's
    /// ServiceGroup before the services that use it.
    package func backend(clientName: String, connections: Int, logger: Logger) throws -> RedisBackend {
        if isCluster {
            let client = RedisClusterClient(
                configuration: try clusterConfiguration(clientName: clientName, connectionsPerNode: connections), logger: logger)
            return RedisBackend(
                client: client, service: client, locator: .cluster(client), redactedURL: client.configuration.redactedURL,
                close: { await client.close() })
        }
        let configuration = try configuration(clientName: clientName)
        switch try transport {
        case .threads:
            let pool = RedisConnectionPool(configuration: configuration, size: connections, logger: logger)
            return RedisBackend(
                client: pool, service: pool, locator: .standalone(configuration), redactedURL: configuration.redactedURL,
                close: { await pool.close() })
        case .nio:
            let pool = NIORedisConnectionPool(configuration: configuration, size: connections, logger: logger)
            return RedisBackend(
                client: pool, service: pool, locator: .standalone(configuration), redactedURL: configuration.redactedURL,
                close: { await pool.close() })
        }
    }

    package init() {}

    package func validate() throws {
        guard redisTimeout > 0 else { throw ValidationError("--redis-timeout must be positive") }
        _ = try transport
        do {
            _ = try configuration(clientName: "richpush")
        } catch let error as RedisError {
            throw ValidationError(error.message)
        }
    }
}

/// Which ``RedisSharedConnection`` a pool of one Redis is made of.
package enum RedisTransport: String, ExpressibleByArgument, CaseIterable {
    /// ``RedisConnection``: a blocking hiredis context on a thread per connection.
    case threads
    /// ``NIORedisConnection``: a SwiftNIO channel on the shared event loops, hiredis's reader.
    case nio

    /// A connection of this transport that has answered PING.
    package func connect(configuration: RedisConfiguration) async throws -> any RedisSharedConnection {
        switch self {
        case .threads: try await RedisConnection.connect(configuration: configuration)
        case .nio: try await NIORedisConnection.connect(configuration: configuration)
        }
    }
}

/// What a process talks to Redis through: one Redis or a Redis Cluster, chosen by the URL.
package struct RedisBackend: RedisClient {
    /// Commands and pipelines (routed by slot on a cluster).
    package let client: any RedisClient
    /// Closes the connections when the ServiceGroup stops.
    package let service: any Service
    /// Where connections of one's own go (blocking readers, sharded subscribers).
    package let locator: RedisNodeLocator
    package let redactedURL: String
    private let closing: @Sendable () async -> Void

    package init(
        client: any RedisClient, service: any Service, locator: RedisNodeLocator, redactedURL: String,
        close: @escaping @Sendable () async -> Void
    ) {
        self.client = client
        self.service = service
        self.locator = locator
        self.redactedURL = redactedURL
        self.closing = close
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] { try await client.pipeline(commands) }

    package var topology: RedisTopology { client.topology }

    package func close() async { await closing() }
}

/// Connects for a one-shot command (checking that Redis answers), turning a Redis failure into
/// one clear line; `close()` when done.
package func connect(_ options: RedisOptions, clientName: String) async throws -> RedisBackend {
    let backend = try options.backend(clientName: clientName, connections: 1, logger: Logger(label: "richpush.cli"))
    do {
        try await backend.client.send("PING")
        return backend
    } catch let error as RedisError {
        await backend.close()
        throw CLIError("cannot reach Redis at \(backend.redactedURL): \(error.message)")
    }
}
