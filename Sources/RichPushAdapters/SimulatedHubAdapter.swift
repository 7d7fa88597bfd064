import Foundation
package import Hiredis
package import RichPushCore

/// A push hub on Redis (sharded) Pub/Sub, for development, tests and load tests: each push is SPUBLISHed
/// (pipelined, one round trip per batch) to its device's channel. When no subscriber received it
/// (the device is offline) the hub holds it, as APNs and FCM do: one push per collapse id per
/// device (a newer push with the same collapse id replaces the older), and every push without
/// one (an FCM message without `collapse_key`), each until its deadline (its ttl from the
/// notification's creation, to the millisecond, or the hub's hold time) and within its
/// platform's ``HubHold/Limits`` (Android: FCM's 4 collapse keys). The device simulator takes
/// what is held when it subscribes again; `HubExpirySweeper` reports what expired.
package struct SimulatedHubAdapter: PushAdapter {
    package let name = "simulated"
    let redis: any RedisClient
    let hold: HubHold
    let holdFor: Duration
    /// On a cluster a script's keys must share a slot, so a batch goes out in one call per
    /// bucket; one Redis takes the whole batch in one call (with one push per bucket, as a batch
    /// of single-device notifications mostly has, one call per bucket was one per push).
    let callPerBucket: Bool
    /// The app whose pushes these are (named in each envelope but the default app's).
    let app: AppID

    package init(redis: any RedisClient, prefix: String = "richpush", holdFor: Duration = .seconds(86400), app: AppID = .default) {
        self.redis = redis
        self.app = app
        self.hold = HubHold(prefix: prefix)
        self.holdFor = holdFor
        callPerBucket = redis.topology == .cluster
    }

    /// The channel a device with this push handle listens on (with `SSUBSCRIBE`: the hub sends
    /// with `SPUBLISH`, so on Redis Cluster a push reaches only the shard of the device's channel).
    package static func channel(prefix: String, handle: String) -> String { HubHold(prefix: prefix).channel(handle) }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
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
        var calls: [HubHold.PublishCall] = []
        var order: [[Int]] = []
        for indices in groups.values {
            for start in stride(from: 0, to: indices.count, by: HubHold.pushesPerCall) {
                let chunk = Array(indices[start..<min(start + HubHold.pushesPerCall, indices.count)])
                var call = HubHold.PublishCall(now: nowMilliseconds)
                call.pushes.reserveCapacity(chunk.count)
                for index in chunk {
                    let push = pushes[index]
                    let bucket = buckets[index]
                    let collapses = !push.rendered.collapseID.isEmpty
                    let envelope = SimulatedEnvelope.encode(id: Self.id(of: push), installation: push.installation.id,
                                                            sentAt: sentAt, pushType: push.rendered.pushType, payload: push.rendered.payload,
                                                            notification: push.notification, app: app)
                    // Held until the push's deadline (creation + the sender's ttl, in ms), never
                    // longer or shorter, as APNs and FCM do.
                    let deadline = push.rendered.deadline
                    let holdFor = deadline > 0 ? max(1, min(holdMilliseconds, deadline - nowMilliseconds)) : holdMilliseconds
                    let limits = HubHold.Limits.of(push.installation.platform)
                    // Without a collapse id each push is held on its own, under a field of its own.
                    let field = collapses ? push.rendered.collapseID : "\n\(push.notification).\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
                    call.pushes.append(HubHold.PublishItem(held: hold.key(push.installation.handle, bucket: bucket), expiry: hold.expiryKey(bucket: bucket),
                                                           channel: hold.channel(push.installation.handle, bucket: bucket), envelope: envelope, hold: holdFor,
                                                           field: field, handle: push.installation.handle,
                                                           most: collapses ? limits.collapseIDs : limits.messages))
                }
                calls.append(call)
                order.append(chunk)
            }
        }
        let replies = try await redis.run(HubHold.publishOrHold, calls: calls)
        var outcomes = [PushOutcome](repeating: .failed(reason: "no reply from Redis", retryable: true), count: pushes.count)
        for (chunk, reply) in zip(order, replies) {
            let receivers = reply.errorMessage == nil ? reply.array ?? [] : []
            for (position, index) in chunk.enumerated() {
                let id = Self.id(of: pushes[index])
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

    /// The hub's id of a push (its envelope's `id`, the adapter id): its collapse id, or its
    /// notification's id when it has none, and its installation.
    static func id(of push: OutgoingPush) -> String {
        (push.rendered.collapseID.isEmpty ? String(push.notification) : push.rendered.collapseID) + ":" + push.installation.id
    }
}

/// What travels on a device channel: the platform payload plus the hub's metadata.
package enum SimulatedEnvelope {
    /// `{"id", "installation", "notification"?, "app"?, "sentAt", "pushType", "payload"}` (`app`
    /// for an app other than the default, so an expired hold is recorded in its ledger). The strings
    /// are escaped: the id carries the sender's collapse id, any printable ASCII, `"` and `\`
    /// included (spliced in unescaped, such a push was not JSON and no device could read it).
    package static func encode(id: String, installation: String, sentAt: Int, pushType: String, payload: [UInt8], notification: Int? = nil, app: AppID = .default) -> [UInt8] {
        var json = JSONWriter(capacity: payload.count + 160)
        json.beginObject()
        json.field("id", id)
        json.field("installation", installation)
        if let notification { json.field("notification", notification) }
        if !app.isDefault { json.field("app", app.rawValue) }
        json.field("sentAt", sentAt)
        json.field("pushType", pushType)
        // The payload is JSON already; splice it in rather than re-encode it.
        json.key("payload")
        json.raw(payload)
        json.endObject()
        return json.bytes
    }
}
