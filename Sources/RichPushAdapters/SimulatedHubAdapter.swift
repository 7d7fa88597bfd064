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

    public init(redis: any RedisClient, prefix: String = "richpush", holdFor: Duration = .seconds(86400)) {
        self.redis = redis
        self.hold = HubHold(prefix: prefix)
        self.holdFor = holdFor
    }

    /// The channel a device with this push handle listens on (with `SSUBSCRIBE`: the hub sends
    /// with `SPUBLISH`, so on Redis Cluster a push reaches only the shard of the device's channel).
    public static func channel(prefix: String, handle: String) -> String { HubHold(prefix: prefix).channel(handle) }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let sentAt = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
        let nowMilliseconds = Int64(sentAt / 1000)
        let holdMilliseconds = Int64(holdFor.milliseconds)
        // Publish-or-hold is one script per push, so a device that subscribes and then takes its
        // held pushes can never fall between a PUBLISH that found no one and the hold after it.
        let replies = try await redis.run(HubHold.publishOrHold, calls: pushes.map { push in
            let envelope = SimulatedEnvelope.encode(id: push.rendered.collapseID + ":" + push.installation.id, installation: push.installation.id,
                                                    sentAt: sentAt, pushType: push.rendered.pushType, payload: push.rendered.payload,
                                                    notification: push.notification)
            // Held no longer than the push's expiration (the sender's ttl), as APNs and FCM do.
            let expiration = Int64(push.rendered.expiration)
            let holdFor = expiration > 0 ? max(1, min(holdMilliseconds, expiration * 1000 - nowMilliseconds)) : holdMilliseconds
            return (keys: [hold.key(push.installation.handle), hold.expiryKey(push.installation.handle)],
                    arguments: [hold.channel(push.installation.handle), envelope, holdFor, push.rendered.collapseID,
                                nowMilliseconds, push.installation.handle, HubHold.perDevice])
        })
        return replies.enumerated().map { index, reply in
            let id = pushes[index].rendered.collapseID + ":" + pushes[index].installation.id
            if let message = reply.errorMessage { return .failed(reason: message, retryable: true) }
            return (reply.int ?? 0) > 0 ? .sent(adapterID: id) : .held(adapterID: id)
        }
    }
}

/// What travels on a device channel: the platform payload plus the hub's metadata.
public enum SimulatedEnvelope {
    public static func encode(id: String, installation: String, sentAt: Int, pushType: String, payload: [UInt8], notification: Int? = nil) -> [UInt8] {
        // The payload is JSON already; splice it in rather than re-encode it.
        var bytes = Array("{\"id\":\"\(id)\",\"installation\":\"\(installation)\",".utf8)
        if let notification { bytes += Array("\"notification\":\(notification),".utf8) }
        bytes += Array("\"sentAt\":\(sentAt),\"pushType\":\"\(pushType)\",\"payload\":".utf8)
        bytes += payload
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
