import Crypto
import RichPushCore

/// `apns-id` for a (notification, installation) pair: a lowercase canonical UUID derived from the
/// pair (SHA-256, laid out as an RFC 9562 version 8 UUID), so a retry of the same push carries the
/// same id and Apple's answers and logs line up with ours.
package enum APNSID {
    package static func make(notification: Int, installation: String) -> String {
        var bytes = Array(SHA256.hash(data: Array("richpush:\(notification):\(installation)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 10
        let hex = Hex.encode(bytes)
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20),
        ]
        return parts.map(String.init).joined(separator: "-")
    }
}
