package import Logging
import Synchronization

/// A ``RedisClient`` for Redis Cluster: each command goes to the master that owns its key's slot.
///
/// A pipeline is split per node and sent to all nodes at once; replies come back in the order of
/// the commands. `MULTI … EXEC` groups travel whole to the node of their first key. The slot map
/// comes from `CLUSTER SHARDS` (`CLUSTER SLOTS` before Redis 7) and is read again when a node
/// answers `MOVED` or cannot be reached (a failover); `ASK` is followed with `ASKING` for one
/// command; `TRYAGAIN`, `CLUSTERDOWN` and a node that cannot be reached are retried with back-off,
/// up to ``RedisClusterConfiguration/maxRedirects`` times, then their error is returned as Redis
/// gave it. A connection lost or timed out with a command in flight is retried only for reads: a
/// write may have run, and its ``RedisError/Code/connectionLost`` or ``RedisError/Code/timeout``
/// goes to the caller.
/// `SCRIPT LOAD` goes to every master, so `EVALSHA` finds its script wherever its keys live.
/// A script or command whose keys are in several slots gets Redis's `CROSSSLOT` error: keys that
/// belong together share a hash tag (`{q0}`).
package final class RedisClusterClient: RedisClient, Sendable {
    package var topology: RedisTopology { .cluster }

    package let configuration: RedisClusterConfiguration
    private let logger: Logger
    private struct State {
        var map = ClusterSlotMap()
        var loaded = false
        var pools: [ClusterNode: RedisConnectionPool] = [:]
        var refreshedAt: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    package init(configuration: RedisClusterConfiguration, logger: Logger = Logger(label: "richpush.redis.cluster")) {
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: - Slot map

    /// The master that owns `slot` now (reading the slot map first if it was never read).
    package func node(forSlot slot: Int) async throws -> ClusterNode {
        if !state.withLock({ $0.loaded }) { try await refreshSlots() }
        guard let node = state.withLock({ $0.map.owners[slot] }) else {
            throw RedisError(code: .server, message: "CLUSTERDOWN slot \(slot) has no master in the slot map")
        }
        return node
    }

    /// Connection settings for a connection of one's own to the master of `key`'s slot (blocking
    /// reads, which must not share a pool).
    package func configuration(forKey key: String) async throws -> RedisConfiguration {
        configuration.configuration(for: try await node(forSlot: HashSlot.of(key)))
    }

    /// The masters, as the slot map says.
    package func masters() async throws -> [ClusterNode] {
        if !state.withLock({ $0.loaded }) { try await refreshSlots() }
        return state.withLock { $0.map.masters }
    }

    /// Reads the slot map from the first node that answers (known masters, then the seeds).
    package func refreshSlots() async throws {
        let candidates = state.withLock { $0.map.masters } + configuration.seeds
        var lastError: any Error = RedisError(code: .connectionFailed, message: "no cluster node answered")
        for node in candidates {
            do {
                let pool = self.pool(for: node)
                var map: ClusterSlotMap?
                let shards = try await pool.pipeline([RedisCommand("CLUSTER", "SHARDS")])[0]
                if shards.errorMessage == nil {
                    map = ClusterSlotMap.shards(shards, seed: node)
                } else {
                    map = ClusterSlotMap.slots(try await pool.send(RedisCommand("CLUSTER", "SLOTS")), seed: node)
                }
                guard let map, !map.masters.isEmpty else { throw RedisError.unexpected(shards, expected: "a slot map") }
                state.withLock { state in
                    state.map = map
                    state.loaded = true
                    state.refreshedAt = .now
                }
                if !map.isComplete { logger.warning("the cluster's slot map has unassigned slots", metadata: ["node": "\(node)"]) }
                return
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Refreshes at most every 100 ms (many commands may see the same MOVED or failure at once).
    private func refreshSoon() async {
        let due = state.withLock { state in state.refreshedAt.map { ContinuousClock.now - $0 > .milliseconds(100) } ?? true }
        guard due else { return }
        do { try await refreshSlots() } catch { logger.warning("cannot read the cluster's slot map", metadata: ["error": "\(error)"]) }
    }

    private func pool(for node: ClusterNode) -> RedisConnectionPool {
        state.withLock { state in
            if let pool = state.pools[node] { return pool }
            let pool = RedisConnectionPool(
                configuration: configuration.configuration(for: node), size: configuration.connectionsPerNode, logger: logger)
            state.pools[node] = pool
            return pool
        }
    }

    /// Closes every node's connections.
    package func close() async {
        let pools = state.withLock { Array($0.pools.values) }
        for pool in pools { await pool.close() }
    }

    // MARK: - Commands

    /// A command, or a MULTI … EXEC group, and where it goes next.
    private struct Unit {
        var indices: [Int]
        var route: CommandRoute
        var target: Target = .route
    }

    private enum Target: Hashable {
        /// By the slot map.
        case route
        /// To this node (MOVED).
        case node(ClusterNode)
        /// To this node, preceded by ASKING (ASK).
        case ask(ClusterNode)
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        guard !commands.isEmpty else { return [] }
        if !state.withLock({ $0.loaded }) { try await refreshSlots() }
        var replies = [RedisValue](repeating: .null, count: commands.count)
        var pending = Self.units(of: commands)
        var attempt = 0
        while !pending.isEmpty {
            attempt += 1
            let last = attempt > configuration.maxRedirects
            var next: [Unit] = []
            var backOff = false
            var lostError: (any Error)?
            let results = await send(pending, commands: commands)
            for (unit, result) in zip(pending, results) {
                switch result {
                case .failure(let error):
                    // The node is gone (a failover, a network cut): re-read the map and try again,
                    // unless the unit may already have run there.
                    guard !last, Self.mayResend(unit, commands: commands, after: error) else { throw error }
                    lostError = error
                    var retry = unit
                    retry.target = .route
                    next.append(retry)
                case .success(let unitReplies):
                    let redirect = unitReplies.lazy.compactMap(\.errorMessage).compactMap(Self.redirect).first
                    switch redirect {
                    case .moved(let slot, let node)? where !last:
                        state.withLock { $0.map.assign(slot...slot, to: node) }
                        var retry = unit
                        retry.target = .node(node)
                        next.append(retry)
                    case .ask(let node)? where !last:
                        var retry = unit
                        retry.target = unit.indices.count == 1 ? .ask(node) : .route
                        if unit.indices.count > 1 { backOff = true }
                        next.append(retry)
                    case .retryLater? where !last, .readOnly? where !last:
                        backOff = true
                        var retry = unit
                        retry.target = .route
                        next.append(retry)
                    default:
                        for (index, reply) in zip(unit.indices, unitReplies) { replies[index] = reply }
                    }
                }
            }
            if lostError != nil || next.contains(where: { $0.target == .route }) { await refreshSoon() }
            if backOff || lostError != nil { try await Task.sleep(for: .milliseconds(min(50 * attempt * attempt, 1000))) }
            pending = next
        }
        return replies
    }

    /// Splits a pipeline into single commands and whole MULTI … EXEC groups, each with its route.
    private static func units(of commands: [RedisCommand]) -> [Unit] {
        var units: [Unit] = []
        var index = 0
        while index < commands.count {
            if commands[index].name == "MULTI" {
                var end = index + 1
                while end < commands.count, !["EXEC", "DISCARD"].contains(commands[end].name) { end += 1 }
                let indices = Array(index...min(end, commands.count - 1))
                let route = indices.lazy.map { commands[$0].route }.first { if case .slot = $0 { true } else { false } } ?? .anyNode
                units.append(Unit(indices: indices, route: route))
                index = end + 1
            } else if commands[index].name == "WAIT", !units.isEmpty {
                // WAIT counts the writes of its connection: it goes with the command before it.
                units[units.count - 1].indices.append(index)
                index += 1
            } else {
                units.append(Unit(indices: [index], route: commands[index].route))
                index += 1
            }
        }
        return units
    }

    /// Sends each unit to its node, all nodes at once; per unit, its replies or its node's failure.
    private func send(_ units: [Unit], commands: [RedisCommand]) async -> [Result<[RedisValue], any Error>] {
        let (masters, owners) = state.withLock { ($0.map.masters, $0.map.owners) }
        // Node → (unit positions, commands in order); a broadcast unit goes to every master.
        var plan: [ClusterNode: (units: [Int], commands: [RedisCommand], asking: [Bool])] = [:]
        var broadcast: Set<Int> = []
        for (position, unit) in units.enumerated() {
            var nodes: [ClusterNode] = []
            var asking = false
            switch unit.target {
            case .node(let node): nodes = [node]
            case .ask(let node): nodes = [node]; asking = true
            case .route:
                switch unit.route {
                case .slot(let slot): nodes = owners[slot].map { [$0] } ?? []
                case .anyNode: nodes = masters.randomElement().map { [$0] } ?? configuration.seeds.prefix(1).map { $0 }
                case .allMasters:
                    nodes = masters
                    broadcast.insert(position)
                }
            }
            for node in nodes {
                var entry = plan[node] ?? ([], [], [])
                entry.units.append(position)
                entry.asking.append(asking)
                if asking { entry.commands.append(RedisCommand("ASKING")) }
                entry.commands += unit.indices.map { commands[$0] }
                plan[node] = entry
            }
        }
        let results = ResultBox()
        let counts = units.map(\.indices.count)
        let broadcasts = broadcast
        await withDiscardingTaskGroup { group in
            for (node, entry) in plan {
                group.addTask {
                    do {
                        let replies = try await self.pool(for: node).pipeline(entry.commands)
                        var offset = 0
                        results.value.withLock { results in
                            for (position, asking) in zip(entry.units, entry.asking) {
                                if asking { offset += 1 }
                                let count = counts[position]
                                let slice = Array(replies[offset..<(offset + count)])
                                offset += count
                                // A broadcast keeps the first error, or any success.
                                if broadcasts.contains(position), case .success(let kept)? = results[position],
                                    kept.contains(where: { $0.errorMessage != nil }) == false,
                                    slice.contains(where: { $0.errorMessage != nil }) == false
                                {
                                    continue
                                }
                                results[position] = .success(slice)
                            }
                        }
                    } catch {
                        results.value.withLock { results in for position in entry.units { results[position] = .failure(error) } }
                    }
                }
            }
        }
        return results.value.withLock { results in
            // No node for it in the map: as Redis says it, so it is retried after a refresh.
            units.indices.map { position in
                results[position]
                    ?? .success(
                        Array(
                            repeating: .error("CLUSTERDOWN no master serves this command's slot in the slot map"), count: counts[position]))
            }
        }
    }

    /// Replies per unit position, filled by the per-node tasks.
    private final class ResultBox: Sendable {
        let value = Mutex<[Int: Result<[RedisValue], any Error>]>([:])
    }

    private enum Redirect {
        case moved(slot: Int, node: ClusterNode)
        case ask(node: ClusterNode)
        case retryLater
        case readOnly
    }

    private static func redirect(_ message: String) -> Redirect? {
        let parts = message.split(separator: " ")
        switch parts.first {
        case "MOVED"? where parts.count >= 3:
            guard let slot = Int(parts[1]), let node = ClusterNode(parts[2]) else { return nil }
            return .moved(slot: slot, node: node)
        case "ASK"? where parts.count >= 3:
            return ClusterNode(parts[2]).map { .ask(node: $0) }
        case "TRYAGAIN"?, "CLUSTERDOWN"?, "LOADING"?, "MASTERDOWN"?:
            return .retryLater
        case "READONLY"?:
            // A master demoted by a failover: the map is stale.
            return .readOnly
        default:
            return nil
        }
    }

    /// Whether a unit that failed with `error` may be sent again: when it never reached its node
    /// (no connection), or when running it twice changes nothing (reads). A write whose connection
    /// broke or timed out may have run, and may even have reached a replica that is promoted next:
    /// sent again, it would run twice (a second notification, a second push), so its error goes
    /// to the caller, whose retry is idempotent where it matters (the API's idempotency keys, a
    /// worker's job that is retried as a whole).
    private static func mayResend(_ unit: Unit, commands: [RedisCommand], after error: any Error) -> Bool {
        guard let error = error as? RedisError else { return false }
        switch error.code {
        case .connectionFailed, .connectionUnavailable: return true
        case .connectionLost, .timeout: return unit.indices.allSatisfy { commands[$0].isReadOnly }
        default: return false
        }
    }
}
