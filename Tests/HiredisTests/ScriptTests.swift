import Hiredis
import RedisTestSupport
import Testing

@Suite("Lua scripts by EVALSHA")
struct ScriptTests {
    static let incrementBy = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")

    @Test func localSHAEqualsRedisAndNOSCRIPTReloads() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let key = uniqueKeyPrefix() + "n"
            // Not loaded yet: the first run meets NOSCRIPT and loads it in the same call.
            #expect(try await connection.send("SCRIPT", "EXISTS", Self.incrementBy.sha1) == .array([.integer(0)]))
            #expect(try await connection.run(Self.incrementBy, keys: [key], arguments: [5]) == .integer(5))
            #expect(try await connection.send("SCRIPT", "EXISTS", Self.incrementBy.sha1) == .array([.integer(1)]))
            #expect(try await connection.send("SCRIPT", "LOAD", Self.incrementBy.source).string == Self.incrementBy.sha1)
            // After SCRIPT FLUSH (as after a Redis restart) it is reloaded again.
            try await connection.send("SCRIPT", "FLUSH")
            let replies = try await connection.run(Self.incrementBy, calls: (1...3).map { ([key], [$0]) })
            #expect(replies == [.integer(6), .integer(8), .integer(11)])
            await connection.close()
        }
    }

    @Test func scriptErrorsAreThrownWithRedisText() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let failing = RedisScript("return redis.error_reply('BADJOB job 7 is broken')")
            await #expect {
                try await connection.run(failing)
            } throws: { error in
                (error as? RedisError)?.serverErrorPrefix == "BADJOB"
            }
            await connection.close()
        }
    }
}
