import Foundation
import RedisTestSupport
import Testing

@testable import Hiredis

/// What the cluster client sends again after a node failed with a command in flight: reads, which
/// may run twice, and never a write, which may already have run (and reached a replica).
@Suite("Redis Cluster resends")
struct ClusterResendTests {
    /// A script that writes, then holds its node for `milliseconds` (Redis runs nothing else meanwhile).
    static func slowIncrement(_ key: String, milliseconds: Int) -> RedisCommand {
        RedisCommand(
            "EVAL",
            """
            redis.call('INCR', KEYS[1])
            local start = redis.call('TIME')
            repeat
                local now = redis.call('TIME')
            until (now[1] - start[1]) * 1000000 + (now[2] - start[2]) >= tonumber(ARGV[1]) * 1000
            return 1
            """, 1, key, milliseconds)
    }

    /// The write ran, and its reply came after the client's timeout: the caller gets the timeout,
    /// and the counter was incremented once. (Sent again, the script would have run a second time
    /// once the first ended: the duplicate a failover made of a create whose reply was lost.)
    @Test func aWriteThatTimedOutIsNotSentAgain() async throws {
        try await withRedisCluster { cluster in
            var configuration = cluster.configuration
            configuration.node.commandTimeout = .milliseconds(300)
            let client = RedisClusterClient(configuration: configuration)
            let key = "resend:\(UUID().uuidString)"
            let error = await #expect(throws: RedisError.self) { _ = try await client.send(Self.slowIncrement(key, milliseconds: 800)) }
            #expect(error?.code == .timeout, "\(String(describing: error))")
            // The script has ended by now, so a read waits for nothing.
            try await Task.sleep(for: .milliseconds(800))
            let check = RedisClusterClient(configuration: cluster.configuration)
            #expect(try await check.send(RedisCommand("GET", key)).string == "1", "the script ran once")
            await check.close()
            await client.close()
        }
    }

    /// A read whose reply came too late is sent again and answered.
    @Test func aReadThatTimedOutIsSentAgain() async throws {
        try await withRedisCluster { cluster in
            let writer = RedisClusterClient(configuration: cluster.configuration)
            var configuration = cluster.configuration
            configuration.node.commandTimeout = .milliseconds(300)
            let reader = RedisClusterClient(configuration: configuration)
            _ = try await reader.send(RedisCommand("PING"))
            // A script holds the key's node for 1.2 s; a read there answered "1" more than 400 ms
            // after it was sent ran after the script and outlived the 300 ms timeout: it was sent
            // again. A read that ran before the script (nil) or near its end proves nothing, so
            // the run is repeated (the script can start late on a busy machine).
            var resent = false
            for _ in 0..<5 where !resent {
                let key = "resend:\(UUID().uuidString)"
                async let held = writer.send(Self.slowIncrement(key, milliseconds: 1200))
                try await Task.sleep(for: .milliseconds(150))
                let started = ContinuousClock.now
                let read = try await reader.send(RedisCommand("GET", key))
                resent = read.string == "1" && ContinuousClock.now - started > .milliseconds(400)
                #expect(try await held.int == 1)
            }
            #expect(resent, "no read met the script in 5 runs")
            await reader.close()
            await writer.close()
        }
    }

    @Test func onlyReadsCountAsReadOnly() {
        #expect(RedisCommand("GET", "k").isReadOnly)
        #expect(RedisCommand("hmget", "k", "a").isReadOnly)
        #expect(RedisCommand("EVALSHA_RO", "abc", 1, "k").isReadOnly)
        #expect(!RedisCommand("EVALSHA", "abc", 1, "k").isReadOnly)
        #expect(!RedisCommand("INCR", "k").isReadOnly)
        #expect(!RedisCommand("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">").isReadOnly, "it claims entries")
        #expect(!RedisCommand("CLUSTER", "FAILOVER").isReadOnly)
        #expect(!RedisCommand("NOSUCHCOMMAND").isReadOnly, "unknown commands count as writes")
    }
}
