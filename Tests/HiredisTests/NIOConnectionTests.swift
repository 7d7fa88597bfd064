import Glibc
import NIOCore
import RedisTestSupport
import Testing

@testable import Hiredis

/// What only the SwiftNIO transport does: its event loop as an executor, automatic pipelining
/// of the requests of one tick, large replies through hiredis's reader, loop-aware pooling.
@Suite("NIORedisConnection against a real redis-server")
struct NIOConnectionTests {
    @Test func aLoopCanRunOnTheConnectionsEventLoop() async throws {
        try await withRedisServer { server in
            let connection = try await NIORedisConnection.connect(configuration: server.configuration.patient)
            let key = uniqueKeyPrefix() + "n"
            let (values, everyStepOnTheLoop) = try await withTaskExecutorPreference(connection) {
                var values: [Int] = []
                var onLoop = true
                for _ in 0..<1000 {
                    values.append(try await connection.send("INCR", key).int ?? -1)
                    onLoop = onLoop && connection.eventLoop.inEventLoop
                }
                return (values, onLoop)
            }
            #expect(values == Array(1...1000))
            #expect(everyStepOnTheLoop)
            await connection.close()
        }
    }

    /// A thousand requests made in one tick of the loop reach Redis in a handful of reads, each
    /// request's MULTI…EXEC whole: the requests share writes and never interleave.
    @Test func requestsOfOneTickShareAWriteAndStayContiguous() async throws {
        try await withRedisServer { server in
            let connection = try await NIORedisConnection.connect(configuration: server.configuration.patient)
            let prefix = uniqueKeyPrefix()
            let readsBefore = try await readsProcessed(server)
            let results = try await withTaskExecutorPreference(connection) {
                try await withThrowingTaskGroup(of: [RedisValue].self) { group in
                    for task in 0..<1000 {
                        group.addTask {
                            try await connection.transaction([
                                RedisCommand("INCR", prefix + "total"), RedisCommand("SET", prefix + "t:\(task)", task),
                            ])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            let reads = try await readsProcessed(server) - readsBefore
            #expect(results.count == 1000)
            #expect(results.allSatisfy { $0.count == 2 && $0[1] == .status("OK") })
            #expect(Set(results.compactMap { $0[0].int }) == Set(1...1000))
            // 4 commands × 1000 requests ≈ 120 KB; Redis reads 16 KB at a time. One request per
            // write would be a thousand reads (the bound leaves room for a slow, busy machine).
            #expect(reads < 200, "Redis read \(reads) times for 1000 requests")
            await connection.close()
        }
    }

    @Test func aLargeReplyArrivesWholeAndTheNextOneToo() async throws {
        try await withRedisServer { server in
            let connection = NIORedisConnection(configuration: server.configuration.patient)
            let key = uniqueKeyPrefix() + "big"
            let value = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try await connection.send("SET", key, value)
            let replies = try await connection.pipeline([
                RedisCommand("GET", key), RedisCommand("STRLEN", key), RedisCommand("ECHO", "small"),
            ])
            #expect(replies[0] == .bulk(value))
            #expect(replies[1] == .integer(value.count))
            #expect(replies[2] == .bulk(Array("small".utf8)))
            await connection.close()
        }
    }

    /// Code running on a loop of the pool's group gets a connection of that loop.
    @Test func aPoolPrefersTheCallersOwnLoop() async throws {
        try await withRedisServer { server in
            let pool = NIORedisConnectionPool(configuration: server.configuration.patient, size: 4)
            var idsByLoop: [ObjectIdentifier: Set<Int>] = [:]
            for connection in pool.connections {
                let id = try #require(try await connection.send("CLIENT", "ID").int)
                idsByLoop[ObjectIdentifier(connection.eventLoop), default: []].insert(id)
            }
            for connection in pool.connections {
                let ids = try await withTaskExecutorPreference(connection) {
                    var ids: Set<Int> = []
                    for _ in 0..<20 { ids.insert(try await pool.send("CLIENT", "ID").int ?? -1) }
                    return ids
                }
                #expect(ids.isSubset(of: idsByLoop[ObjectIdentifier(connection.eventLoop)] ?? []))
            }
            await pool.close()
        }
    }

    /// A server that accepts the TCP connection and never answers: the handshake hangs. A request
    /// waiting for it fails with `.closed` when the connection is closed, and `close()` returns
    /// (bounded by the connect timeout); a connect that gets no answer is a timeout and backs off.
    @Test func closeWhileTheHandshakeHangsFailsTheWaitingRequest() async throws {
        let (listener, port) = try silentListener()
        defer { Glibc.close(listener) }
        // 5 s for the first: its close must come before its handshake times out on a busy machine
        // (and close waits for the handshake's end, so not longer); 1 s for the second, whose
        // handshake is to time out.
        var configuration = RedisConfiguration(port: port, password: "never-checked", connectTimeout: .seconds(5))
        // A back-off (300–600 s with its jitter) that no stall of a busy machine outlasts between the
        // failed connect and the checks of it (15–30 s once did: the test then saw a fresh connect).
        configuration.reconnectBackoff = .seconds(600)...(.seconds(600))
        let connection = NIORedisConnection(configuration: configuration)
        let waiting = Task { try await connection.send("PING") }
        try await waitUntil(timeout: .seconds(60), "the request to wait for the handshake") { connection.outstandingCommandCount == 1 }
        await connection.close()
        await #expect {
            try await waiting.value
        } throws: { error in
            (error as? RedisError)?.code == .closed
        }

        configuration.connectTimeout = .seconds(1)
        let other = NIORedisConnection(configuration: configuration)
        await #expect {
            try await other.send("PING")
        } throws: { error in
            (error as? RedisError)?.code == .timeout
        }
        #expect(other.isBackingOff)
        await #expect {
            try await other.send("PING")
        } throws: { error in
            (error as? RedisError)?.code == .connectionUnavailable
        }
        await other.close()
    }

    /// A listening socket on a free loopback port that never accepts: the kernel completes the TCP
    /// handshake from its backlog, and nothing is ever read or written.
    private func silentListener() throws -> (socket: Int32, port: Int) {
        try RedisServer.loopbackSocket(listening: true)
    }

    private func readsProcessed(_ server: RedisServer) async throws -> Int {
        let info = try await server.probe("INFO", "stats").string ?? ""
        let line = try #require(info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("total_reads_processed:") })
        return try #require(Int(line.split(separator: ":")[1]))
    }
}
