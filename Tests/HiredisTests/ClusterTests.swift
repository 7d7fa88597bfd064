import Foundation
import Hiredis
import RedisTestSupport
import Synchronization
import Testing

/// Slot routing against known values, and the cluster client against a real local cluster
/// (scripts/cluster.sh): routing, pipelines across nodes, scripts, transactions, a live reshard
/// and a master killed mid-run.
@Suite("Redis Cluster")
struct ClusterTests {
    @Test func slotsMatchRedisKnownValues() {
        // CRC16/XMODEM check value, and slots Redis documents or computes (CLUSTER KEYSLOT).
        #expect(HashSlot.of("123456789") == 0x31C3 & 0x3FFF)
        // The String, raw-buffer and generic sequence paths agree (the check value of CRC-16/XMODEM).
        let check: UInt16 = 0x31C3
        #expect(HashSlot.crc16("123456789") == check)
        #expect(HashSlot.crc16(Array("123456789".utf8)) == check)
        #expect(HashSlot.crc16("123456789".utf8.lazy.map { $0 }) == check)
        #expect(HashSlot.crc16("") == 0)
        #expect(HashSlot.of("foo") == 12182)
        #expect(HashSlot.of("bar") == 5061)
        #expect(HashSlot.of("{user1000}.following") == HashSlot.of("{user1000}.followers"))
        #expect(HashSlot.of("foo{bar}{zap}") == HashSlot.of("bar"))
        // An empty tag hashes the whole key; only the first { counts.
        #expect(HashSlot.of("foo{}{bar}") != HashSlot.of("bar"))
        #expect(HashSlot.of("foo{{bar}}zap") == HashSlot.of("{bar"))
        #expect(HashSlot.of("richpush:{q0}:jobs") == HashSlot.of("q0"))
    }

    @Test func clusterURLsParseAndBadOnesSayWhy() throws {
        let configuration = try RedisClusterConfiguration(url: "redis+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2:7001/?name=worker")
        #expect(configuration.seeds == [ClusterNode(host: "10.0.0.1", port: 7000), ClusterNode(host: "10.0.0.2", port: 7001)])
        #expect(
            configuration.node.username == "app" && configuration.node.password == "s@cret" && configuration.node.clientName == "worker")
        #expect(configuration.redactedURL == "redis+cluster://***@10.0.0.1:7000,10.0.0.2:7001")
        #expect(RedisClusterConfiguration.isClusterURL("REDIS+CLUSTER://h:1") && !RedisClusterConfiguration.isClusterURL("redis://h:1"))
        for bad in [
            "redis://h:1", "redis+cluster://", "redis+cluster://h", "redis+cluster://h:99999", "redis+cluster://h:1/3",
            "redis+cluster://h:1?db=2",
        ] {
            #expect(throws: RedisError.self, "\(bad)") { try RedisClusterConfiguration(url: bad) }
        }
    }

    @Test func commandsAndPipelinesReachTheRightNodesInOrder() async throws {
        try await withRedisCluster { cluster in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.close() } }
            // Our slot for 200 keys is Redis's.
            for index in 0..<200 {
                let key = "key:\(index):\(UUID().uuidString.prefix(4))"
                #expect(try await client.send("CLUSTER", "KEYSLOT", key).int == HashSlot.of(key), "\(key)")
            }
            // One pipeline of 3,000 commands over every master; replies in order.
            let keys = (0..<1000).map { "k\($0)" }
            _ = try await client.sendAll(keys.map { RedisCommand("SET", $0, "v-\($0)") })
            let values = try await client.sendAll(keys.map { RedisCommand("GET", $0) } + keys.map { RedisCommand("STRLEN", $0) })
            #expect(values.prefix(1000).map(\.string) == keys.map { "v-\($0)" })
            #expect(values.dropFirst(1000).map(\.int) == keys.map { "v-\($0)".count })
            // The keys really are spread: every master holds some.
            for port in cluster.masterPorts {
                let size = Int(try await cluster.cli(port, ["dbsize"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                #expect(size > 200, "master \(port) holds \(size) keys")
            }
            // Scripts load on every master and run where their keys are; a transaction runs whole.
            let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
            for tag in ["a", "b", "c", "d", "e", "f"] {
                #expect(try await client.run(script, keys: ["{\(tag)}:n"], arguments: [5]).int == 5)
            }
            let exec = try await client.transaction([
                RedisCommand("INCR", "{t}:x"), RedisCommand("INCR", "{t}:y"), RedisCommand("GET", "{t}:x"),
            ])
            #expect(exec.map(\.int) == [1, 1, 1] || exec.last?.string == "1")
            // Keys in two slots in one command: Redis's CROSSSLOT, as it is.
            await #expect(throws: RedisError.self) { try await client.send("MGET", "{a}:n", "{b}:n") }
        }
    }

    /// `redis-cli --cluster reshard` moves 1,000 slots while 20,000 increments run: MOVED and ASK
    /// are followed, and every increment counts once.
    @Test func aLiveReshardLosesNothing() async throws {
        try await withRedisCluster { cluster in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.close() } }
            let keys = (0..<500).map { "counter:\($0)" }
            let ids = try await cluster.cli(cluster.masterPorts[0], ["cluster", "myid"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let to = try await cluster.cli(cluster.masterPorts[1], ["cluster", "myid"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let port = cluster.masterPorts[0]
            let reshard = Task.detached {
                try await runTool(
                    "/usr/bin/redis-cli",
                    [
                        "--cluster", "reshard", "127.0.0.1:\(port)", "--cluster-from", ids, "--cluster-to", to,
                        "--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "10",
                    ])
            }
            for round in 0..<40 {
                _ = try await client.sendAll(keys.map { RedisCommand("INCR", $0) })
                if round == 20 { _ = try await reshard.value }
            }
            let result = try await reshard.value
            #expect(result.status == 0, "\(result.output.suffix(500))")
            let counts = try await client.sendAll(keys.map { RedisCommand("GET", $0) }).map { $0.string.flatMap { Int($0) } ?? -1 }
            #expect(counts.allSatisfy { $0 == 40 }, "\(counts.filter { $0 != 40 }.prefix(5))")
        }
    }

    /// A master is killed with SIGKILL: its replica is promoted, the client re-reads the slot map
    /// and carries on.
    @Test func aKilledMastersReplicaTakesOver() async throws {
        try await withRedisCluster { cluster in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.close() } }
            let keys = (0..<300).map { "f:\($0)" }
            _ = try await client.sendAll(keys.map { RedisCommand("SET", $0, "1") })
            // WAIT: the replicas have the writes before the kill.
            for port in cluster.masterPorts { _ = try await cluster.cli(port, ["wait", "1", "2000"]) }
            kill(try cluster.pid(of: cluster.masterPorts[0]), SIGKILL)
            let seen = Mutex<Set<String>>([])
            do {
                try await waitUntil(timeout: .seconds(60), "the cluster to serve every key again") {
                    let replies = try await client.pipeline(keys.map { RedisCommand("GET", $0) })
                    seen.withLock { $0 = Set(replies.map { "\($0)" }) }
                    return replies.allSatisfy { $0.string == "1" }
                }
            } catch {
                Issue.record("last replies: \(seen.withLock { $0 })")
                throw error
            }
            _ = try await client.sendAll(keys.map { RedisCommand("INCR", $0) })
            let after = try await client.sendAll(keys.map { RedisCommand("GET", $0) })
            #expect(after.allSatisfy { $0.string == "2" })
        }
    }

    /// Sharded subscriptions follow a failover: the killed master's channels move to its promoted
    /// replica, and stay there when the old master comes back as a replica (it accepts
    /// `SSUBSCRIBE` too, but `SPUBLISH` on the new master counts only its own subscribers).
    @Test func shardedSubscriptionsFollowAFailoverAndARestartedMaster() async throws {
        try await withRedisCluster { cluster in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.close() } }
            let subscriber = RedisShardedSubscriber(locator: .cluster(client), checkInterval: .seconds(1))
            let channels = (0..<40).map { "{hub\($0)}:device" }
            try await subscriber.ssubscribe(channels)
            let following = Task { await subscriber.run() }
            let received = Received()
            let reading = Task {
                for await message in subscriber.messages {
                    received.seen.withLock { _ = $0.insert(String(decoding: message.payload, as: UTF8.self)) }
                }
            }
            defer { following.cancel(); reading.cancel() }

            /// Every channel's publish, on the master that serves it now, reaches this subscriber.
            func everyChannelIsServed(_ round: String) async throws {
                try await waitUntil(timeout: .seconds(30), "every channel to reach the subscriber (\(round))") {
                    try? await client.refreshSlots()
                    guard let counts = try? await client.pipeline(channels.map { RedisCommand("SPUBLISH", $0, "\(round) \($0)") }) else {
                        return false
                    }
                    return counts.allSatisfy { ($0.int ?? 0) >= 1 }
                }
                try await waitUntil(timeout: .seconds(60), "the \(round) messages") {
                    received.seen.withLock { seen in channels.allSatisfy { seen.contains("\(round) \($0)") } }
                }
            }
            try await everyChannelIsServed("before")
            let victim = cluster.masterPorts[0]
            kill(try cluster.pid(of: victim), SIGKILL)
            try await waitUntil(timeout: .seconds(30), "a replica to take over") {
                try? await client.refreshSlots()
                return (try? await client.masters())?.contains { $0.port == victim } == false
            }
            // Restarted at once: its subscriber connection may come back before the subscriber's
            // next check sees the new slot map (the race seen in a CI run).
            try await cluster.restartNode(victim)
            try await waitUntil(timeout: .seconds(30), "the old master to rejoin as a replica") {
                (try? await cluster.cli(victim, ["info", "replication"]))?.contains("master_link_status:up") == true
            }
            try await everyChannelIsServed("rejoined")
            await subscriber.close()
        }
    }
}

/// What a subscriber received (a class: a `Mutex` cannot be captured by an escaping closure).
private final class Received: Sendable {
    let seen = Mutex<Set<String>>([])
}
