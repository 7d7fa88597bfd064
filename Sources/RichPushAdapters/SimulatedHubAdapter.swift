import Foundation
public import Hiredis
public import RichPushCore

/// A push hub on Redis (sharded) Pub/Sub, for development, tests and load tests: each push is SPUBLISHed
/// (pipelined, one round trip per batch) to its device's channel. When no subscriber received it
/// (the device is offline) the hub holds it, as APNs and FCM do: one push per collapse id per
/// device (a newer push with the same collapse id replaces the older; without one, the
/// notification's id is the collapse id), each until its ttl (or the hub's hold time) runs out,
/// at most ``HubHold/perDevice`` per device. The device simulator takes what is held when it
/// subscribes again; ``HubHoldSweeper`` reports what expired.
public struct SimulatedHubAdapter: PushAdapter {
    public let name = "simulated"
    let redis: any RedisClient
    let hold: HubHold
    let holdFor: Duration
    /// On a cluster a script's keys must share a slot, so a batch goes out in one call per
    /// bucket; one Redis takes the whole batch in one call (with one push per bucket, as a batch
    /// of single-device notifications mostly has, one call per bucket was one per push).
    let callPerBucket: Bool

    public init(redis: any RedisClient, prefix: String = "richpush", holdFor: Duration = .seconds(86400)) {
        self.redis = redis
        self.hold = HubHold(prefix: prefix)
        self.holdFor = holdFor
        callPerBucket = redis is RedisClusterClient
    }

    /// The channel a device with this push handle listens on (with `SSUBSCRIBE`: the hub sends
    /// with `SPUBLISH`, so on Redis Cluster a push reaches only the shard of the device's channel).
    public static func channel(prefix: String, handle: String) -> String { HubHold(prefix: prefix).channel(handle) }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let sentAt = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
        let nowMilliseconds = Int64(sentAt / 1000)
        let holdMilliseconds = Int64(holdFor.milliseconds)
        // Publish-or-hold is one script, so a device that subscribes and then takes its held
        // pushes can never fall between a PUBLISH that found no one and the hold after it; one
        // call takes the batch (on a cluster, one per bucket: a slot).
        let buckets = pushes.map { HubHold.bucket($0.installation.handle) }
        var groups: [Int: [Int]] = [:]
        for index in pushes.indices { groups[callPerBucket ? buckets[index] : 0, default: []].append(index) }
        var calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])] = []
        var order: [[Int]] = []
        for indices in groups.values {
            for start in stride(from: 0, to: indices.count, by: HubHold.pushesPerCall) {
                let chunk = Array(indices[start..<min(start + HubHold.pushesPerCall, indices.count)])
                var keys: [any RedisArgument] = []
                var arguments: [any RedisArgument] = [nowMilliseconds, HubHold.perDevice]
                keys.reserveCapacity(chunk.count * 2)
                arguments.reserveCapacity(chunk.count * 5 + 2)
                for index in chunk {
                    let push = pushes[index]
                    let bucket = buckets[index]
                    let envelope = SimulatedEnvelope.encode(id: push.rendered.collapseID + ":" + push.installation.id, installation: push.installation.id,
                                                            sentAt: sentAt, pushType: push.rendered.pushType, payload: push.rendered.payload,
                                                            notification: push.notification)
                    // Held no longer than the push's expiration (the sender's ttl), as APNs and FCM do.
                    let expiration = Int64(push.rendered.expiration)
                    let holdFor = expiration > 0 ? max(1, min(holdMilliseconds, expiration * 1000 - nowMilliseconds)) : holdMilliseconds
                    keys.append(hold.key(push.installation.handle, bucket: bucket))
                    keys.append(hold.expiryKey(bucket: bucket))
                    arguments.append(hold.channel(push.installation.handle, bucket: bucket))
                    arguments.append(envelope)
                    arguments.append(holdFor)
                    arguments.append(push.rendered.collapseID)
                    arguments.append(push.installation.handle)
                }
                calls.append((keys, arguments))
                order.append(chunk)
            }
        }
        let replies = try await redis.run(HubHold.publishOrHold, calls: calls)
        var outcomes = [PushOutcome](repeating: .failed(reason: "no reply from Redis", retryable: true), count: pushes.count)
        for (chunk, reply) in zip(order, replies) {
            let receivers = reply.errorMessage == nil ? reply.array ?? [] : []
            for (position, index) in chunk.enumerated() {
                let id = pushes[index].rendered.collapseID + ":" + pushes[index].installation.id
                if let message = reply.errorMessage {
                    outcomes[index] = .failed(reason: message, retryable: true)
                } else if position < receivers.count {
                    outcomes[index] = (receivers[position].int ?? 0) > 0 ? .sent(adapterID: id) : .held(adapterID: id)
                } else {
                    outcomes[index] = .failed(reason: "Redis answered \(receivers.count) of \(chunk.count) pushes", retryable: true)
                }
            }
        }
        return outcomes
    }
}

/// What travels on a device channel: the platform payload plus the hub's metadata.
public enum SimulatedEnvelope {
    /// `{"id", "installation", "notification"?, "sentAt", "pushType", "payload"}`. The strings
    /// are escaped: the id carries the sender's collapse id, any printable ASCII, `"` and `\`
    /// included (spliced in unescaped, such a push was not JSON and no device could read it).
    public static func encode(id: String, installation: String, sentAt: Int, pushType: String, payload: [UInt8], notification: Int? = nil) -> [UInt8] {
        var json = JSONWriter(capacity: payload.count + 160)
        json.beginObject()
        json.field("id", id)
        json.field("installation", installation)
        if let notification { json.field("notification", notification) }
        json.field("sentAt", sentAt)
        json.field("pushType", pushType)
        // The payload is JSON already; splice it in rather than re-encode it.
        json.key("payload")
        json.raw(payload)
        json.endObject()
        return json.bytes
    }
}
