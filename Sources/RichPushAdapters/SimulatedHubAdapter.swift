import Foundation
package import Hiredis
package import RichPushCore

/// A push hub on Redis (sharded) Pub/Sub, for development, tests and load tests: each push is SPUBLISHed
/// (pipelined, one round trip per batch) to its device's channel. When no subscriber received it
/// (the device is offline) the hub's publish-or-hold script publishes it again and, if still no
/// one receives it, holds it, as APNs and FCM do: one push per collapse id per
/// device (a newer push with the same collapse id replaces the older), and every push without
/// one (an FCM message without `collapse_key`), each until its deadline (its ttl from the
/// notification's creation, to the millisecond, or the hub's hold time) and within its
/// platform's ``OfflineStore/Limits`` (Android: FCM's 4 collapse keys). A device is addressed by its
/// app and its handle (``OfflineStore/address(_:app:)``): a handle registered in two apps is two
/// devices, as a token belongs to one app with Apple and Google. The device simulator takes
/// what is held when it subscribes again; `HubExpirySweeper` reports what expired.
package struct SimulatedHubAdapter: PushAdapter {
    package let name = "simulated"
    let redis: any RedisClient
    let store: OfflineStore
    let holdFor: Duration
    /// On a cluster a script's keys must share a slot, so a batch's offline pushes go to the
    /// publish-or-hold script in one call per bucket; one Redis takes them all in one call (with
    /// one push per bucket, as a batch of single-device notifications mostly has, one call per
    /// bucket was one per push).
    let callPerBucket: Bool
    /// The app whose pushes these are (named in each envelope but the default app's).
    let app: AppID

    package init(redis: any RedisClient, prefix: String = "richpush", holdFor: Duration = .seconds(86400), app: AppID = .default) {
        self.redis = redis
        self.app = app
        self.store = OfflineStore(prefix: prefix)
        self.holdFor = holdFor
        callPerBucket = redis.topology == .cluster
    }

    /// The channel a device with this push handle listens on (with `SSUBSCRIBE`: the hub sends
    /// with `SPUBLISH`, so on Redis Cluster a push reaches only the shard of the device's channel).
    package static func channel(prefix: String, handle: String) -> String { OfflineStore(prefix: prefix).channel(handle) }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let sentAt = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
        let nowMilliseconds = Int64(sentAt / 1000)
        let addresses = pushes.map { OfflineStore.address($0.installation.handle, app: app) }
        let buckets = addresses.map(OfflineStore.bucket)
        let ids = pushes.map(Self.id(of:))
        let channels = pushes.indices.map { store.channel(addresses[$0], bucket: buckets[$0]) }
        let envelopes = pushes.indices.map {
            SimulatedEnvelope.encode(
                id: ids[$0], installation: pushes[$0].installation.id, sentAt: sentAt, pushType: pushes[$0].rendered.pushType,
                payload: pushes[$0].rendered.payload, notification: pushes[$0].notification, app: app)
        }
        // Each push is first SPUBLISHed on its own, all in one pipeline: a device that is online
        // costs Redis one command (the script took 2.2 µs of Redis a push, these 0.65). A push
        // that reached no one goes through publish-or-hold, which publishes it again and holds it
        // if still no one receives it, in one script: a device that subscribes and then takes its
        // held pushes meanwhile gets it either way, and once (the first publish reached no one).
        let published = try await redis.pipeline(pushes.indices.map { RedisCommand("SPUBLISH", channels[$0], envelopes[$0]) })
        var outcomes = [PushOutcome](repeating: .failed(reason: "no reply from Redis", retryable: true), count: pushes.count)
        var offline: [Int] = []
        for (index, reply) in zip(pushes.indices, published) {
            if let message = reply.errorMessage {
                outcomes[index] = .failed(reason: message, retryable: true)
            } else if (reply.int ?? 0) > 0 {
                outcomes[index] = .sent(adapterID: ids[index])
            } else {
                offline.append(index)
            }
        }
        if !offline.isEmpty {
            let items = offline.map {
                item(
                    for: pushes[$0], address: addresses[$0], bucket: buckets[$0], channel: channels[$0], envelope: envelopes[$0],
                    now: nowMilliseconds)
            }
            try await publishOrHold(items, at: offline, buckets: buckets, ids: ids, now: nowMilliseconds, into: &outcomes)
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
    package static func encode(
        id: String, installation: String, sentAt: Int, pushType: String, payload: [UInt8], notification: Int? = nil, app: AppID = .default
    ) -> [UInt8] {
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
