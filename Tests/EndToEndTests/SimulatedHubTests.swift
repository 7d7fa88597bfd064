import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import Testing

/// The simulated hub against a real Redis: a push reaches a subscribed device's channel, is held
/// for an offline one, and a batch costs one pipeline of SPUBLISHes and, for its offline devices,
/// one script call per chunk, not one per push.
@Suite("Simulated hub")
struct SimulatedHubTests {
    static func push(to handle: String, notification: Int) throws -> OutgoingPush {
        let installation = Installation(id: "i-\(handle)", platform: .apns, handle: handle, tags: [], owner: "alice", updatedAt: 0)
        let rendered = try PushRenderer().render(
            RichNotification(
                id: notification, message: "hi", richType: .text, contentType: "text/plain",
                payloadHash: "h", payloadSize: 2, creator: "alice",
                target: "username:alice", createdAt: 0), collapseID: String(notification))
        return OutgoingPush(notification: notification, installation: installation, rendered: rendered)
    }

    /// The device simulator reads the handle back from every channel it gets a push on.
    @Test func aChannelNamesItsHandle() {
        let hold = OfflineStore(prefix: "rp:hub")
        for handle in ["token-1", "a}:device:b", "ünï", ""] {
            #expect(hold.handle(ofChannel: hold.channel(handle)) == handle)
        }
        #expect(hold.handle(ofChannel: "rp:hub:{hub3}:held:x") == nil)
        #expect(hold.handle(ofChannel: "}:device") == nil)
    }

    /// A sender's collapse id may hold `"` and `\` (any printable ASCII): the envelope stays JSON.
    @Test func anEnvelopeIsJSONWhateverTheCollapseID() throws {
        let id = #"say "hi" \ bye:inst-1"#
        let bytes = SimulatedEnvelope.encode(
            id: id, installation: "inst-1", sentAt: 5, pushType: "alert", payload: Array(#"{"aps":{}}"#.utf8), notification: 9)
        let value = try #require(JSONValue.parse(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        #expect(value["id"]?.string == id && value["installation"]?.string == "inst-1")
        #expect(value["notification"]?.int == 9 && value["sentAt"]?.int == 5 && value["pushType"]?.string == "alert")
        #expect(value["payload"]?["aps"] == .object([:]))
    }

    @Test func onlineDevicesGetTheirPushAndOfflineOnesHaveItHeldInOneCallPerChunk() async throws {
        try await withRedisServer { server in
            let prefix = uniqueKeyPrefix("hub")
            let redis = RedisConnection(configuration: server.configuration)
            let hub = SimulatedHubAdapter(redis: redis, prefix: prefix)
            let hold = OfflineStore(prefix: prefix)
            let handles = (0..<1_000).map { String(format: "%064x", $0) }
            // Every other device is online.
            let subscriber = RedisSubscriber(configuration: server.configuration)
            let online = stride(from: 0, to: handles.count, by: 2).map { handles[$0] }
            try await subscriber.ssubscribe(online.map { hold.channel($0) })
            // Once first, so that the script is loaded (its first call is a NOSCRIPT and a retry).
            _ = try await hub.send([try Self.push(to: "warm", notification: 1)])
            _ = try await server.probe("CONFIG", "RESETSTAT")

            let outcomes = try await hub.send(try handles.map { try Self.push(to: $0, notification: 7) })

            let stats = try await server.probe("INFO", "commandstats").string ?? ""
            let calls = { (name: String) -> Int in
                guard let line = stats.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(name):") }),
                    let value = line.split(separator: ":calls=").dropFirst().first?.split(separator: ",").first
                else { return -1 }
                return Int(value) ?? 0
            }
            // 1,000 pushes over all 128 buckets on one Redis: every push published in one
            // pipeline, and the 500 that reached no one published again by the publish-or-hold
            // script, in one call (it was one per bucket, so one per push for batches of
            // single-device notifications). ClusterFlowTests run the per-bucket calls a cluster needs.
            #expect(
                calls("evalsha") == handles.count / 2 / OfflineStore.pushesPerCall,
                "\(calls("evalsha")) script calls for 500 offline devices")
            #expect(calls("spublish") == handles.count + handles.count / 2)
            for (index, outcome) in outcomes.enumerated() {
                switch outcome {
                case .sent: #expect(index % 2 == 0, "device \(index) is offline but its push was sent")
                case .held: #expect(index % 2 == 1, "device \(index) is online but its push was held")
                default: Issue.record("device \(index): \(outcome)")
                }
            }
            // What was held is there for the device to take when it comes back; the online ones hold nothing.
            let taken = try await hold.take(handles, now: Int64(Date().timeIntervalSince1970 * 1000), on: redis)
            #expect(Set(taken.map(\.handle)) == Set(stride(from: 1, to: handles.count, by: 2).map { handles[$0] }))
            #expect(taken.count == handles.count / 2)
            await subscriber.close()
            await redis.close()
        }
    }

    /// What a platform simulator accepted is passed on to the hub even when Redis refuses it at
    /// first (a Redis restarted from its AOF answers LOADING): a refusal is a failed outcome, not
    /// a thrown error, and the forwarder once took it for a delivery (scripts/chaos.sh lost 29
    /// pairs so). Here the refusal is a WRONGTYPE: the device's held pushes under a string key.
    @Test func aForwardedPushIsTriedAgainWhileRedisRefusesIt() async throws {
        try await withRedisServer { server in
            let prefix = uniqueKeyPrefix("hub")
            let redis = RedisConnection(configuration: server.configuration)
            let hub = SimulatedHubAdapter(redis: redis, prefix: prefix)
            let hold = OfflineStore(prefix: prefix)
            let push = try Self.push(to: "offline", notification: 3)
            try await redis.send("SET", hold.key("offline"), "not a hash")

            // Refused for all of its patience: given up with Redis's reason, never taken as sent.
            let failure = await hub.forward(push, patience: .milliseconds(300))
            #expect(failure?.contains("WRONGTYPE") == true, "\(failure ?? "taken as handed over")")

            // Refused, then taken once Redis takes it: held for the offline device.
            _ = try await server.probe("CONFIG", "RESETSTAT")
            let forwarding = Task { await hub.forward(push, patience: .seconds(120)) }
            try await waitUntil(timeout: .seconds(60), "a refused try") {
                let stats = try await server.probe("INFO", "commandstats").string ?? ""
                let line = stats.components(separatedBy: "\r\n").first { $0.hasPrefix("cmdstat_evalsha:") } ?? ""
                return (line.components(separatedBy: "failed_calls=").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0) > 0
            }
            try await redis.send("DEL", hold.key("offline"))
            let handedOver = await forwarding.value
            #expect(handedOver == nil, "\(handedOver ?? "")")
            let taken = try await hold.take(["offline"], now: Int64(Date().timeIntervalSince1970 * 1000), on: redis)
            #expect(taken.map(\.handle) == ["offline"])
            await redis.close()
        }
    }
}
