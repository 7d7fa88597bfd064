import Hiredis
import RedisTestSupport
import Testing

@Suite("Pub/Sub subscriber")
struct PubSubTests {
    @Test func deliversInOrderAndFollowsRunTimeChanges() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(configuration: server.configuration)
            let publisher = RedisConnection(configuration: server.configuration)
            let prefix = uniqueKeyPrefix()
            var messages = subscriber.messages.makeAsyncIterator()

            try await subscriber.subscribe([prefix + "a", prefix + "b"])
            #expect(try await publisher.send("PUBLISH", prefix + "a", [UInt8]([0, 255, 10])) == .integer(1))
            #expect(try await publisher.send("PUBLISH", prefix + "b", "two") == .integer(1))
            #expect(await messages.next() == RedisPubSubMessage(channel: prefix + "a", payload: [0, 255, 10]))
            #expect(await messages.next() == RedisPubSubMessage(channel: prefix + "b", payload: Array("two".utf8)))

            try await subscriber.unsubscribe([prefix + "a"])
            #expect(try await publisher.send("PUBLISH", prefix + "a", "dropped") == .integer(0))
            try await subscriber.psubscribe([prefix + "p:*"])
            #expect(try await publisher.send("PUBLISH", prefix + "p:1", "by pattern") == .integer(1))
            #expect(
                await messages.next()
                    == RedisPubSubMessage(channel: prefix + "p:1", pattern: prefix + "p:*", payload: Array("by pattern".utf8)))

            try await subscriber.unsubscribe()
            try await subscriber.punsubscribe()
            #expect(try await publisher.send("PUBSUB", "NUMSUB", prefix + "b") == .array([.bulk(Array((prefix + "b").utf8)), .integer(0)]))
            #expect(try await publisher.send("PUBSUB", "NUMPAT") == .integer(0))
            await subscriber.close()
            #expect(await messages.next() == nil)
            await publisher.close()
        }
    }

    @Test func closeReturnsWhenRedisDoesNotAnswer() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(configuration: server.configuration)
            try await subscriber.subscribe([uniqueKeyPrefix() + "a"])
            // A paused Redis never confirms the unsubscribe; close gives up after its timeout, long
            // before the pause ends (a minute's margin: a busy machine took 10 s once).
            _ = try await server.probe("CLIENT", "PAUSE", 120_000, "ALL")
            let start = ContinuousClock.now
            await subscriber.close(unsubscribeTimeout: .milliseconds(300))
            #expect(ContinuousClock.now - start < .seconds(60))
            var messages = subscriber.messages.makeAsyncIterator()
            #expect(await messages.next() == nil)
            // A paused Redis answers nothing, SHUTDOWN neither: killed here, so that the teardown
            // does not wait out the pause.
            server.kill()
        }
    }

    @Test func fiveThousandChannelsOnOneConnection() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(configuration: server.configuration)
            let publisher = RedisConnection(configuration: server.configuration)
            let channels = (0..<5000).map { "device:\($0)" }
            try await subscriber.subscribe(channels)
            let receivers = try await publisher.pipeline(channels.map { RedisCommand("PUBLISH", $0, $0) })
            #expect(receivers.allSatisfy { $0 == .integer(1) })
            var seen = Set<String>()
            for await message in subscriber.messages {
                #expect(message.payload == Array(message.channel.utf8))
                seen.insert(message.channel)
                if seen.count == channels.count { break }
            }
            #expect(seen.count == 5000)
            let clients = try await server.probe("CLIENT", "LIST").string ?? ""
            #expect(clients.split(separator: "\n").filter { $0.contains("sub=5000") }.count == 1)
            await subscriber.close()
            await publisher.close()
        }
    }

    @Test func resubscribesAfterTheServerRestarts() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(configuration: server.configuration)
            let channel = uniqueKeyPrefix() + "device"
            try await subscriber.subscribe([channel])
            server.kill()
            try await server.start()
            let publisher = RedisConnection(configuration: server.configuration)
            try await waitUntil(timeout: .seconds(60), "the subscriber to come back") {
                try await publisher.send("PUBLISH", channel, "after restart") == .integer(1)
            }
            var messages = subscriber.messages.makeAsyncIterator()
            var received = await messages.next()
            // Probes published while we polled may arrive first; all carry the same text.
            while received?.channel != channel { received = await messages.next() }
            #expect(received?.payload == Array("after restart".utf8))
            #expect(subscriber.reconnectCount >= 1)
            // The restore was announced, so a consumer can pick up what was published in the gap.
            var restorations = subscriber.restorations.makeAsyncIterator()
            #expect(await restorations.next() != nil)
            await subscriber.close()
            #expect(await restorations.next() == nil)
            await publisher.close()
        }
    }

    @Test func subscribeFailsClearlyWhenRedisIsDown() async throws {
        try await RedisServer.withRefusingPort { port in
            let subscriber = RedisSubscriber(configuration: RedisConfiguration(port: port))
            await #expect {
                try await subscriber.subscribe(["x"])
            } throws: { error in
                (error as? RedisError)?.code == .connectionFailed
            }
            await subscriber.close()
        }
    }
}
