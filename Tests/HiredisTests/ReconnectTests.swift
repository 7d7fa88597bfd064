import Hiredis
import RedisTestSupport
import Testing

@Suite("Reconnect after Redis restarts")
struct ReconnectTests {
    @Test(arguments: Transport.allCases) func poolAndConnectionComeBackAfterKillAndRestart(_ transport: Transport) async throws {
        try await withRedisServer(appendOnly: true) { server in
            let (pool, closePool) = transport.pool(server.configuration, size: 2)
            let key = uniqueKeyPrefix() + "kept"
            try await pool.send("SET", key, "before")
            // appendfsync everysec: wait for the write to reach the AOF before the crash.
            try await pool.send("BGREWRITEAOF")
            try await waitUntil(timeout: .seconds(60), "the AOF rewrite") {
                try await pool.send("INFO", "persistence").string?.contains("aof_rewrite_in_progress:0") == true
            }
            server.kill()

            await #expect {
                try await pool.send("GET", key)
            } throws: { error in
                (error as? RedisError)?.isTransient == true
            }
            try await server.start()
            try await waitUntil(timeout: .seconds(60), "the pool to reconnect") {
                (try? await pool.send("PING")) == .status("PONG")
            }
            #expect(try await pool.send("GET", key) == .bulk(Array("before".utf8)))
            // Every connection of the pool works again, not just the one that answered first.
            let replies = try await withThrowingTaskGroup(of: RedisValue.self) { group in
                for _ in 0..<20 { group.addTask { try await pool.send("ECHO", "x") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0 == .bulk(Array("x".utf8)) })
            await closePool()
        }
    }

    @Test(arguments: Transport.allCases) func requestsFailFastWhileRedisIsDown(_ transport: Transport) async throws {
        try await withRedisServer { server in
            var configuration = server.configuration
            // 300–600 s with its jitter: no stall of a busy machine outlasts it between the checks.
            configuration.reconnectBackoff = .seconds(600)...(.seconds(600))
            let connection = transport.connection(configuration)
            try await connection.send("PING")
            server.kill()
            await #expect(throws: RedisError.self) { try await connection.send("PING") }
            await #expect(throws: RedisError.self) { try await connection.send("PING") }
            // Within the back-off the client does not even try: it says so at once.
            let clock = ContinuousClock()
            let start = clock.now
            await #expect {
                try await connection.send("PING")
            } throws: { error in
                let error = try #require(error as? RedisError)
                return error.code == .connectionUnavailable && error.message.contains("next reconnect")
            }
            #expect(clock.now - start < .seconds(10))
            await connection.close()
        }
    }
}
