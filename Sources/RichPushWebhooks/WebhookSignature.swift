import Crypto
import Foundation
import RichPushCore

/// `X-RichPush-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` with
/// `X-RichPush-Timestamp: <unix seconds>`, as Stripe and Svix sign: the timestamp inside the MAC
/// lets a receiver refuse a replayed request, the body the tampered one.
package enum WebhookSignature {
    package static let signatureHeader = "X-RichPush-Signature"
    package static let timestampHeader = "X-RichPush-Timestamp"

    package static func sign(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        var mac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        mac.update(data: Array("\(timestamp).".utf8))
        mac.update(data: body)
        return "v1=" + Hex.encode(mac.finalize())
    }

    /// What a receiver checks: one of the header's `v1=` signatures (comma-separated, for a
    /// rotation) matches, compared in constant time, and the timestamp is within `tolerance` of `now`.
    package static func verify(
        header: String, timestamp: String, body: [UInt8], secret: String,
        tolerance: Duration = .seconds(300), now: Int64? = nil
    ) -> Bool {
        let now = now ?? Int64(Date().timeIntervalSince1970)
        guard let sent = Int64(timestamp), abs(now - sent) <= tolerance.components.seconds else { return false }
        let expected = Array(sign(secret: secret, timestamp: sent, body: body).utf8)
        return header.split(separator: ",").contains { candidate in
            ConstantTime.equal(Array(candidate.trimmingCharacters(in: .whitespaces).utf8), expected)
        }
    }
}
