import Foundation
public import Hiredis
public import RichPushCore

/// A push hub on Redis Pub/Sub, for development, tests and load tests: each push is PUBLISHed
/// (pipelined, one round trip per batch) to its device's channel. Like APNs, when no subscriber
/// received it (the device is offline) the hub keeps the newest push per device for a bounded
/// time; the device simulator takes it when it subscribes again.
public struct SimulatedHubAdapter: PushAdapter {
    public let name = "simulated"
    let redis: any RedisClient
    let prefix: String
    let holdFor: Duration

    public init(redis: any RedisClient, prefix: String = "richpush", holdFor: Duration = .seconds(86400)) {
        self.redis = redis
        self.prefix = prefix
        self.holdFor = holdFor
    }

    /// The channel a device with this push handle listens on.
    public static func channel(prefix: String, handle: String) -> String { "\(prefix):device:\(handle)" }
    /// Where the newest undelivered push of a device is held.
    public static func heldKey(prefix: String, handle: String) -> String { "\(prefix):held:\(handle)" }

    public func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        guard !pushes.isEmpty else { return [] }
        let sentAt = Int((Date().timeIntervalSince1970 * 1_000_000).rounded())
        let envelopes = pushes.map { push in
            SimulatedEnvelope.encode(id: push.rendered.collapseID + ":" + push.installation.id, installation: push.installation.id,
                                     sentAt: sentAt, pushType: push.rendered.pushType, payload: push.rendered.payload)
        }
        // Publish-or-hold is one script per push, so a device that subscribes and then takes its
        // held push (GETDEL) can never fall between a PUBLISH that found no one and the SET after it.
        let holdMilliseconds = holdFor.milliseconds
        let nowMilliseconds = Int64(sentAt / 1000)
        let replies = try await redis.run(Self.publishOrHold, calls: zip(pushes, envelopes).map { push, envelope in
            // Held no longer than the push's expiration (the sender's ttl), as APNs and FCM do.
            let expiration = Int64(push.rendered.expiration)
            let hold = expiration > 0 ? max(1, min(Int64(holdMilliseconds), expiration * 1000 - nowMilliseconds)) : Int64(holdMilliseconds)
            return (keys: [Self.heldKey(prefix: prefix, handle: push.installation.handle)],
                    arguments: [Self.channel(prefix: prefix, handle: push.installation.handle), envelope, Int(hold)])
        })
        return replies.enumerated().map { index, reply in
            let id = pushes[index].rendered.collapseID + ":" + pushes[index].installation.id
            if let message = reply.errorMessage { return .failed(reason: message, retryable: true) }
            return (reply.int ?? 0) > 0 ? .sent(adapterID: id) : .held(adapterID: id)
        }
    }

    /// KEYS[1] held key; ARGV channel, envelope, hold in ms. Returns the receivers (0: held).
    static let publishOrHold = RedisScript("""
        local receivers = redis.call('PUBLISH', ARGV[1], ARGV[2])
        if receivers == 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
        return receivers
        """)
}

/// What travels on a device channel: the platform payload plus the hub's metadata.
public enum SimulatedEnvelope {
    public static func encode(id: String, installation: String, sentAt: Int, pushType: String, payload: [UInt8]) -> [UInt8] {
        // The payload is JSON already; splice it in rather than re-encode it.
        var bytes = Array("{\"id\":\"\(id)\",\"installation\":\"\(installation)\",\"sentAt\":\(sentAt),\"pushType\":\"\(pushType)\",\"payload\":".utf8)
        bytes += payload
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
