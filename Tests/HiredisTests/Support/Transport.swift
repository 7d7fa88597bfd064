import Hiredis
import Testing

/// The two ways a connection reaches Redis; behavioural tests run over both.
enum Transport: String, CaseIterable, CustomTestStringConvertible {
    case threads
    case nio

    var testDescription: String { rawValue }

    /// A connection that connects on its first request.
    func connection(_ configuration: RedisConfiguration) -> any RedisSharedConnection {
        switch self {
        case .threads: RedisConnection(configuration: configuration)
        case .nio: NIORedisConnection(configuration: configuration.patient)
        }
    }

    /// A connection that has answered PING.
    func connect(_ configuration: RedisConfiguration) async throws -> any RedisSharedConnection {
        switch self {
        case .threads: try await RedisConnection.connect(configuration: configuration)
        case .nio: try await NIORedisConnection.connect(configuration: configuration.patient)
        }
    }

    /// A pool of `size` connections, and how to close it.
    func pool(_ configuration: RedisConfiguration, size: Int) -> (client: any RedisClient, close: @Sendable () async -> Void) {
        switch self {
        case .threads:
            let pool = RedisConnectionPool(configuration: configuration, size: size)
            return (pool, { await pool.close() })
        case .nio:
            let pool = NIORedisConnectionPool(configuration: configuration.patient, size: size)
            return (pool, { await pool.close() })
        }
    }
}

extension RedisConfiguration {
    /// These settings with a connect that may take 20 s: with the full suite on 2 cores an event
    /// loop can stall for seconds, and the test server's 2 s made a loopback connect time out
    /// (`connect timed out` in three NIO tests). Only a test of the connect timeout sets less.
    var patient: RedisConfiguration {
        var configuration = self
        configuration.connectTimeout = max(configuration.connectTimeout, .seconds(20))
        return configuration
    }
}

extension RedisSharedConnection {
    func close() async { await close(interrupt: false) }
}
