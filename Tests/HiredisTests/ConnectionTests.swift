import Foundation
import RedisTestSupport
import Testing

@testable import Hiredis

@Suite("RedisConnection and NIORedisConnection against a real redis-server")
struct ConnectionTests {
    @Test(arguments: Transport.allCases) func everyByteRoundTrips(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = transport.connection(server.configuration)
            let key = uniqueKeyPrefix() + "bytes"
            let allBytes = (0...255).map { UInt8($0) }
            try await connection.send("SET", key, allBytes)
            #expect(try await connection.send("GET", key) == .bulk(allBytes))
            // Binary keys and field names too, and an empty value.
            let binaryKey = [UInt8]([0, 10, 13, 255]) + Array(key.utf8)
            try await connection.send("HSET", binaryKey, [UInt8]([0, 0]), [UInt8]())
            #expect(try await connection.send("HGET", binaryKey, [UInt8]([0, 0])) == .bulk([]))
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func nestedRepliesOfAStreamRead(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = transport.connection(server.configuration)
            let stream = uniqueKeyPrefix() + "jobs"
            try await connection.send("XGROUP", "CREATE", stream, "workers", "$", "MKSTREAM")
            let id = try await connection.send("XADD", stream, "*", "job", "42", "payload", [UInt8]([0, 1, 2]))
            let reply = try await connection.send("XREADGROUP", "GROUP", "workers", "alice", "COUNT", 10, "STREAMS", stream, ">")
            // [[stream, [[id, [field, value, field, value]]]]]
            let streamReply = try #require(reply.array?.first?.array)
            #expect(streamReply[0].string == stream)
            let entry = try #require(streamReply[1].array?.first?.array)
            #expect(entry[0] == id)
            #expect(
                entry[1] == .array([.bulk(Array("job".utf8)), .bulk(Array("42".utf8)), .bulk(Array("payload".utf8)), .bulk([0, 1, 2])]))
            let empty = try await connection.send("XREADGROUP", "GROUP", "workers", "alice", "COUNT", 10, "STREAMS", stream, ">")
            #expect(empty.isNull)
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func errorRepliesAreTypedErrorsWithRedisText(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = transport.connection(server.configuration)
            let key = uniqueKeyPrefix() + "list"
            try await connection.send("LPUSH", key, "x")
            await #expect {
                try await connection.send("GET", key)
            } throws: { error in
                let error = try #require(error as? RedisError)
                return error.code == .server && error.serverErrorPrefix == "WRONGTYPE" && error.message.contains("wrong kind of value")
            }
            // The connection is still usable after an error reply.
            #expect(try await connection.send("PING") == .status("PONG"))
            // A pipeline keeps error replies as values; sendAll throws the first, so a reply read
            // as data can never be an error read as "nothing there".
            let replies = try await connection.pipeline([RedisCommand("PING"), RedisCommand("GET", key)])
            #expect(replies[1].errorMessage?.hasPrefix("WRONGTYPE") == true)
            await #expect {
                try await connection.sendAll([RedisCommand("PING"), RedisCommand("GET", key)])
            } throws: { error in
                (error as? RedisError)?.serverErrorPrefix == "WRONGTYPE"
            }
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func pipelineKeepsOrderOverTenThousandCommands(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = transport.connection(server.configuration)
            let key = uniqueKeyPrefix() + "counter"
            let commands = (0..<10_000).map { index in
                index % 2 == 0 ? RedisCommand("INCR", key) : RedisCommand("ECHO", "echo-\(index)")
            }
            let replies = try await connection.pipeline(commands)
            #expect(replies.count == 10_000)
            for (index, reply) in replies.enumerated() {
                let expected: RedisValue = index % 2 == 0 ? .integer(index / 2 + 1) : .bulk(Array("echo-\(index)".utf8))
                if reply != expected {
                    Issue.record("reply \(index) is \(reply), expected \(expected)")
                    break
                }
            }
            // Error replies inside a pipeline stay values and do not shift the others.
            let mixed = try await connection.pipeline([RedisCommand("ECHO", "a"), RedisCommand("NOSUCHCOMMAND"), RedisCommand("ECHO", "b")])
            #expect(mixed[0].string == "a")
            #expect(mixed[1].errorMessage?.contains("unknown command") == true)
            #expect(mixed[2].string == "b")
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func transactionsRunAtomicallyAndReportRefusals(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = transport.connection(server.configuration)
            let prefix = uniqueKeyPrefix()
            let results = try await connection.transaction([
                RedisCommand("SET", prefix + "a", "1"),
                RedisCommand("INCR", prefix + "a"),
                RedisCommand("LPUSH", prefix + "a", "x"),
            ])
            #expect(results[0] == .status("OK"))
            #expect(results[1] == .integer(2))
            #expect(results[2].errorMessage?.hasPrefix("WRONGTYPE") == true)
            // A command Redis refuses to queue discards the whole transaction: nothing is written.
            await #expect(throws: RedisError.self) {
                try await connection.transaction([RedisCommand("SET", prefix + "b", "1"), RedisCommand("SET", prefix + "c")])
            }
            #expect(try await connection.send("EXISTS", prefix + "b") == .integer(0))
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func aSlowReplyTimesOutAndTheConnectionRecovers(_ transport: Transport) async throws {
        try await withRedisServer { server in
            var configuration = server.configuration
            configuration.commandTimeout = .milliseconds(200)
            let connection = transport.connection(configuration)
            let key = uniqueKeyPrefix() + "empty"
            let clock = ContinuousClock()
            let start = clock.now
            // BLPOP would block for 300 s; the 200 ms command timeout must end it long before
            // (the bound leaves a busy CI machine many seconds of stalls: the whole test process
            // stood still 21.6 s here once, under scripts/test.sh).
            await #expect {
                try await connection.send("BLPOP", key, 300)
            } throws: { error in
                (error as? RedisError)?.code == .timeout
            }
            #expect(clock.now - start < .seconds(120))
            // The timed-out socket is dropped; the next command gets a fresh one and its own reply
            // (never the BLPOP's). On a busy machine the reconnect and ECHO may miss the 200 ms
            // too: each such miss is a timeout again, and the connection still comes back.
            var after: RedisValue?
            while after == nil, clock.now - start < .seconds(150) {
                do {
                    after = try await connection.send("ECHO", "after")
                } catch let error as RedisError where error.code == .timeout {
                    continue
                }
            }
            #expect(after == .bulk(Array("after".utf8)))
            await connection.close()
        }
    }

    @Test(arguments: Transport.allCases) func refusedConnectionIsAClearError(_ transport: Transport) async throws {
        try await RedisServer.withRefusingPort { port in
            await #expect {
                _ = try await transport.connect(RedisConfiguration(port: port))
            } throws: { error in
                let error = try #require(error as? RedisError)
                return error.code == .connectionFailed && error.message.contains("127.0.0.1:\(port)") && error.message.contains("refused")
            }
        }
    }

    @Test(arguments: Transport.allCases) func unknownHostIsAClearError(_ transport: Transport) async throws {
        await #expect {
            _ = try await transport.connect(RedisConfiguration(host: "no-such-host.invalid", connectTimeout: .seconds(1)))
        } throws: { error in
            let error = try #require(error as? RedisError)
            return error.code == .connectionFailed && error.message.contains("no-such-host.invalid")
        }
    }

    @Test(arguments: Transport.allCases) func wrongPasswordAndACLUser(_ transport: Transport) async throws {
        try await withRedisServer { server in
            try await server.probe("ACL", "SETUSER", "alice", "on", ">alicepw", "~*", "&*", "+@all")
            try await server.probe("CONFIG", "SET", "requirepass", "right")
            var configuration = server.configuration
            // The handshake is bounded by the connect timeout: 20 s, not 2, so that a stall of the
            // whole suite on 2 cores is not read as a timeout (it once was, on the NIO transport).
            configuration.connectTimeout = .seconds(20)
            await #expect {
                _ = try await transport.connect(configuration)
            } throws: { error in
                let error = try #require(error as? RedisError)
                return error.code == .authenticationFailed && error.message.contains("NOAUTH")
            }
            configuration.password = "wrong"
            await #expect {
                _ = try await transport.connect(configuration)
            } throws: { error in
                let error = try #require(error as? RedisError)
                return error.code == .authenticationFailed && error.message.contains("WRONGPASS") && !error.message.contains("wrong ")
            }
            configuration.password = "right"
            let viaPassword = try await transport.connect(configuration)
            #expect(try await viaPassword.send("ACL", "WHOAMI").string == "default")
            await viaPassword.close()
            var alice = try RedisConfiguration(url: "redis://alice:alicepw@127.0.0.1:\(server.port)/2")
            alice.connectTimeout = .seconds(20)
            let viaURL = try await transport.connect(alice)
            #expect(try await viaURL.send("ACL", "WHOAMI").string == "alice")
            try await viaURL.send("SET", "where", "db2")
            #expect(try await viaURL.send("CLIENT", "INFO").string?.contains("db=2") == true)
            await viaURL.close()
        }
    }

    @Test(arguments: Transport.allCases) func closeFailsLaterRequestsAndStopsTheThread(_ transport: Transport) async throws {
        try await withRedisServer { server in
            let connection = try await transport.connect(server.configuration)
            await connection.close()
            await #expect {
                try await connection.send("PING")
            } throws: { error in
                (error as? RedisError)?.code == .closed
            }
            // Its socket is gone from the server's client list (only our probe remains).
            let clients = try await server.probe("CLIENT", "LIST").string ?? ""
            #expect(clients.split(separator: "\n").count == 1)
        }
    }

    @Test(arguments: Transport.allCases) func closeInterruptsABlockedRead(_ transport: Transport) async throws {
        try await withRedisServer { server in
            var configuration = server.configuration
            configuration.commandTimeout = .seconds(150)
            let connection = try await transport.connect(configuration)
            // Blocked for two minutes; close must not wait for it. The bound below leaves a busy
            // machine a minute (close took 7 s once at a load average of 15).
            let blocked = Task { try await connection.send("BLPOP", uniqueKeyPrefix() + "never", 120) }
            try await waitUntil(timeout: .seconds(60), "the BLPOP to block") {
                try await server.probe("INFO", "clients").string?.contains("blocked_clients:1") == true
            }
            let clock = ContinuousClock()
            let start = clock.now
            await connection.close(interrupt: true)
            #expect(clock.now - start < .seconds(60))
            await #expect(throws: RedisError.self) { try await blocked.value }
        }
    }

    /// The kernel keeps 15 bytes of a thread's name; a longer one used to name nothing at all.
    @Test func theConnectionsThreadIsNamedAfterItsClient() async throws {
        try await withRedisServer { server in
            var configuration = server.configuration
            for (clientName, expected) in [
                ("richpush-api", "redis:api"), ("richpush-loadtest-devices", "redis:loadtest-"), ("other", "redis:other"),
            ] {
                configuration.clientName = clientName
                let connection = try await RedisConnection.connect(configuration: configuration)
                #expect(ThreadName.name(of: pthread_t(connection.threadID.load(ordering: .acquiring))) == expected)
                await connection.close()
            }
            #expect(ThreadName.fitted("redis:ééééééééé") == "redis:éééé")
            #expect(ThreadName.forConnection(clientName: nil) == "redis")
        }
    }

    @Test func aLoopCanRunOnTheConnectionsOwnThread() async throws {
        try await withRedisServer { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let key = uniqueKeyPrefix() + "n"
            let (values, threads) = try await withTaskExecutorPreference(connection) {
                var values: [Int] = []
                var threads: Set<UInt> = []
                for _ in 0..<1000 {
                    values.append(try await connection.send("INCR", key).int ?? -1)
                    threads.insert(currentThreadID())
                }
                return (values, threads)
            }
            #expect(values == Array(1...1000))
            #expect(threads == [connection.threadID.load(ordering: .acquiring)])
            await connection.close()
            // After close, work that still prefers the connection runs elsewhere instead of hanging.
            let after = await withTaskExecutorPreference(connection) { currentThreadID() }
            #expect(after != connection.threadID.load(ordering: .acquiring))
        }
    }
}
