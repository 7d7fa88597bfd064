import Hiredis
import RedisTestSupport
import Testing

@Suite("Connection pool")
struct PoolTests {
    @Test(arguments: Transport.allCases) func hundredConcurrentTasksShareFourConnections(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let (pool, closePool) = transport.pool(server.configuration, size: 4)
            let prefix = uniqueKeyPrefix()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<100 {
                    group.addTask {
                        // Each task sees its own replies, in its own order, whatever else is in flight.
                        for step in 1...50 {
                            let value = try await pool.send("INCR", prefix + "task:\(task)")
                            #expect(value == .integer(step))
                            try await pool.send("INCR", prefix + "total")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await pool.send("GET", prefix + "total").int == 5000)
            let clients = try await server.probe("CLIENT", "LIST").string ?? ""
            #expect(clients.split(separator: "\n").count == 4 + 1)
            await closePool()
        }
    }
}
