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
        let replies = try await redis.pipeline(zip(pushes, envelopes).map { push, envelope in
            RedisCommand("PUBLISH", Self.channel(prefix: prefix, handle: push.installation.handle), envelope)
        })
        var outcomes: [PushOutcome] = []
        var holds: [RedisCommand] = []
        for (index, reply) in replies.enumerated() {
            let id = pushes[index].rendered.collapseID + ":" + pushes[index].installation.id
            if let message = reply.errorMessage {
                outcomes.append(.failed(reason: message, retryable: true))
            } else if (reply.int ?? 0) > 0 {
                outcomes.append(.sent(adapterID: id))
            } else {
                holds.append(RedisCommand("SET", Self.heldKey(prefix: prefix, handle: pushes[index].installation.handle), envelopes[index],
                                          "PX", holdFor.components.seconds * 1000 + holdFor.components.attoseconds / 1_000_000_000_000_000))
                outcomes.append(.held(adapterID: id))
            }
        }
        if !holds.isEmpty {
            for reply in try await redis.pipeline(holds) { try reply.throwingError() }
        }
        return outcomes
    }
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
