package import Hiredis
package import RichPushCore

/// The simulated hub's store-and-forward: where it keeps pushes for offline devices (as APNs
/// and FCM keep them, within their limits and each push's TTL), and the scripts that put, take
/// and expire them. (The keys still say `held`, the counter a push kept here moves.)
///
/// Devices are spread over ``buckets`` buckets by the CRC16 of their handle; every key and the
/// channel of a device carry its bucket's hash tag `{hub<b>}`, so each script touches one Redis
/// Cluster slot and the buckets spread over the masters. Per device, a hash
/// `<prefix>:{hub<b>}:held:<handle>`: collapse id → `<expires ms>|<envelope>` (a push without a
/// collapse id under `\n<notification>.<random>`, held beside the others); for every held push, a
/// member `<handle>\n<field>` of its bucket's sorted set `<prefix>:{hub<b>}:held-expiry`, scored by
/// when it expires, which the sweeper reads.
package struct OfflineStore: Sendable, Hashable {
    package let prefix: String

    /// How many pushes the hub holds for one offline device, as its platform does. Past a limit
    /// the push of that kind the hub took longest ago is dropped (expired now, so the sweeper
    /// reports it): for collapse keys FCM says only that it keeps 4, "with no determining factor
    /// on which keys are kept"; dropping the oldest keeps the newest news. (Past 100 messages
    /// without a collapse key FCM drops them all and tells the app; the hub drops the oldest.)
    package struct Limits: Sendable, Hashable {
        /// Most collapse ids held at once, each with its newest push.
        package var collapseIDs: Int
        /// Most pushes held without a collapse id.
        package var messages: Int

        package init(collapseIDs: Int, messages: Int) {
            self.collapseIDs = collapseIDs
            self.messages = messages
        }

        /// APNs': "APNs stores only one notification per bundle ID" for an offline device, the
        /// latest (a device token belongs to one app: one held push per token).
        package static let apns = Limits(collapseIDs: 1, messages: 1)
        /// FCM's: 4 collapse keys and 100 messages without one per device.
        package static let fcm = Limits(collapseIDs: 4, messages: 100)
        /// Other platforms on the hub: 100 of each.
        package static let standard = Limits(collapseIDs: 100, messages: 100)

        /// The limits of a device on `platform`.
        package static func of(_ platform: Platform) -> Limits {
            switch platform {
            case .apns: .apns
            case .fcm, .gcm: .fcm
            default: .standard
            }
        }
    }
    /// Enough for the slots of a few masters to share the hub's work evenly.
    package static let buckets = 128

    package init(prefix: String) {
        self.prefix = prefix
    }

    static func bucket(_ handle: String) -> Int { Int(HashSlot.crc16(handle)) % buckets }
    static func tagged(_ prefix: String, _ bucket: Int) -> String { "\(prefix):{hub\(bucket)}" }

    /// How the hub names a device: its handle, after its app's id and a space for an app other
    /// than the default (no push handle has a space), so that a handle registered in two apps is
    /// two devices. The keys, channels and functions below take this address where they say
    /// handle.
    package static func address(_ handle: String, app: AppID) -> String {
        app.isDefault ? handle : "\(app.rawValue) \(handle)"
    }

    package func key(_ handle: String) -> String { key(handle, bucket: Self.bucket(handle)) }
    /// The held key of `handle`, whose bucket the caller already knows.
    func key(_ handle: String, bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):held:\(handle)" }
    package func expiryKey(_ handle: String) -> String { expiryKey(bucket: Self.bucket(handle)) }
    func expiryKey(bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):held-expiry" }
    /// The channel a device with this push handle listens on (`SSUBSCRIBE`; the hub `SPUBLISH`es).
    package func channel(_ handle: String) -> String { channel(handle, bucket: Self.bucket(handle)) }
    func channel(_ handle: String, bucket: Int) -> String { "\(Self.tagged(prefix, bucket)):device:\(handle)" }
    /// The handle of a device channel.
    package func handle(ofChannel channel: String) -> String? {
        // Searched byte by byte: Foundation's range(of:) was 7 % of the device simulator's CPU.
        let marker = Array("}:device:".utf8)
        let bytes = channel.utf8
        var start = bytes.startIndex
        while let brace = bytes[start...].firstIndex(of: marker[0]) {
            if bytes[brace...].starts(with: marker) {
                return String(Substring(bytes[bytes.index(brace, offsetBy: marker.count)...]))
            }
            start = bytes.index(after: brace)
        }
        return nil
    }

    /// A held push as stored (tests that put one there by hand).
    package static func value(envelope: [UInt8], expiresAt milliseconds: Int64) -> [UInt8] {
        Array("\(milliseconds)|".utf8) + envelope
    }

    /// Most pushes in one `publishOrHold` call.
    package static let pushesPerCall = 500

    /// Takes every device's held pushes that have not expired, 1,000 devices per pipeline.
    package func take(_ handles: [String], now: Int64, on redis: any RedisClient) async throws -> [(handle: String, envelope: [UInt8])] {
        var held: [(handle: String, envelope: [UInt8])] = []
        for start in stride(from: 0, to: handles.count, by: 1000) {
            let chunk = Array(handles[start..<min(start + 1000, handles.count)])
            let replies = try await redis.run(
                Self.takeScript, calls: chunk.map { TakeCall(held: key($0), expiry: expiryKey($0), now: now, handle: $0) })
            for (handle, reply) in zip(chunk, replies) {
                try reply.throwingError()
                for envelope in reply.array ?? [] { if let bytes = envelope.bytes { held.append((handle, bytes)) } }
            }
        }
        return held
    }

    /// Removes up to `limit` pushes whose time ran out (looked for in every bucket, in one
    /// round trip); returns their envelopes.
    package func expire(now: Int64, limit: Int, on redis: any RedisClient) async throws -> [[UInt8]] {
        let replies = try await redis.sendAll(
            (0..<Self.buckets).map { RedisCommand("ZRANGEBYSCORE", expiryKey(bucket: $0), "-inf", now, "LIMIT", 0, limit) })
        var calls: [ExpireCall] = []
        var strays: [RedisCommand] = []
        for (bucket, reply) in replies.enumerated() {
            for member in (reply.array ?? []).compactMap(\.string) {
                guard calls.count < limit else { break }
                guard let split = member.firstIndex(of: "\n") else {
                    // Not one of ours: drop it, or it would be read again on every sweep.
                    strays.append(RedisCommand("ZREM", expiryKey(bucket: bucket), member))
                    continue
                }
                let handle = String(member[..<split]), collapse = String(member[member.index(after: split)...])
                calls.append(ExpireCall(held: key(handle), expiry: expiryKey(bucket: bucket), member: member, field: collapse, now: now))
            }
        }
        if !strays.isEmpty { try await redis.sendAll(strays) }
        guard !calls.isEmpty else { return [] }
        let expired = try await redis.run(Self.expireScript, calls: calls)
        return try expired.compactMap { reply in try reply.throwingError().bytes }
    }
}
