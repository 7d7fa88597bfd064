/// Where a connection of one's own for a key goes: the blocking readers (`XREADGROUP … BLOCK`)
/// and the sharded subscribers, which cannot share a pool or a cluster client's connections.
///
/// On one Redis it is always that Redis. On Redis Cluster it is the master that owns the key's
/// slot now; a reader whose connection fails or is answered `MOVED` calls ``invalidate()`` and
/// asks again, so it follows a failover or a reshard.
package enum RedisNodeLocator: Sendable {
    case standalone(RedisConfiguration)
    case cluster(RedisClusterClient)

    /// The settings of a connection to the node that serves `key`.
    package func configuration(forKey key: String) async throws -> RedisConfiguration {
        switch self {
        case .standalone(let configuration): configuration
        case .cluster(let client): try await client.configuration(forKey: key)
        }
    }

    /// The settings of a connection to each master (one on a single Redis): where a walk over
    /// every key (SCAN) goes.
    package func masters() async throws -> [RedisConfiguration] {
        switch self {
        case .standalone(let configuration): [configuration]
        case .cluster(let client): try await client.masters().map { client.configuration.configuration(for: $0) }
        }
    }

    /// The slot map may be stale (a reader's node failed or redirected it): read it again.
    package func invalidate() async {
        guard case .cluster(let client) = self else { return }
        do { try await client.refreshSlots() } catch {
            // The next configuration(forKey:) reads it again; the caller backs off meanwhile.
        }
    }

    /// Groups keys (or shard channels) by the node that serves them.
    package func group(_ keys: [String]) async throws -> [(configuration: RedisConfiguration, keys: [String])] {
        switch self {
        case .standalone(let configuration):
            return keys.isEmpty ? [] : [(configuration, keys)]
        case .cluster(let client):
            var byNode: [ClusterNode: [String]] = [:]
            for key in keys { byNode[try await client.node(forSlot: HashSlot.of(key)), default: []].append(key) }
            return byNode.sorted { $0.key.description < $1.key.description }
                .map { (client.configuration.configuration(for: $0.key), $0.value) }
        }
    }

    /// Whether `error` means the key's node changed (a lost connection, `MOVED`, a replica's
    /// `READONLY`, `CLUSTERDOWN`): the reader should drop its connection and locate again.
    package static func suggestsRelocation(_ error: any Error) -> Bool {
        guard let error = error as? RedisError else { return false }
        if [.connectionFailed, .connectionUnavailable, .connectionLost].contains(error.code) { return true }
        return ["MOVED", "ASK", "READONLY", "CLUSTERDOWN", "TRYAGAIN"].contains(error.serverErrorPrefix ?? "")
    }
}
