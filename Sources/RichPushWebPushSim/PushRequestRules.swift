import Crypto
import Foundation

/// What RFC 8030 and RFC 8291 require of a push message request's headers and body, checked as
/// a push service checks them, before the service stores anything. Statuses and `errno` values
/// follow Mozilla autopush where the RFCs leave the status open.
enum PushRequestRules {
    /// RFC 8030 §7.2: a push service must accept at least 4,096 bytes of body; this one accepts
    /// no more (413 past it), as Chrome's and Firefox's services do.
    static let maxBodyBytes = 4096
    /// RFC 8291 §4: salt (16) + rs (4) + idlen (1) + keyid (65, the sender's ECDH public key).
    static let headerBytes = 86

    struct Checked: Equatable {
        var ttl: Int
        var urgency: String
        var topic: String?
        var contentEncoding: String?
    }

    /// `header` reads a request header by name (case-insensitively).
    static func check(header: (String) -> String?, body: [UInt8], maxTTL: Int) -> Result<Checked, WebPushSimError> {
        // RFC 8030 §5.2: "A push service MUST return a 400 (Bad Request) status code in response
        // to requests that omit the TTL header field."
        guard let ttlText = header("ttl") else {
            return .failure(
                WebPushSimError(400, errno: 111, .missingTTL, "Missing TTL header (RFC 8030 §5.2: every push message request carries one)"))
        }
        guard let ttl = parseTTL(ttlText) else {
            return .failure(
                WebPushSimError(
                    400, errno: 112, .invalidTTL,
                    "Invalid TTL header value '\(ttlText)': delta-seconds, a non-negative integer (RFC 8030 §5.2)"))
        }
        var urgency = "normal"
        if let value = header("urgency") {
            // RFC 8030 §5.3; ABNF literals are case-insensitive (RFC 5234 §2.3).
            guard ["very-low", "low", "normal", "high"].contains(value.lowercased()) else {
                return .failure(
                    WebPushSimError(
                        400, errno: nil, .invalidUrgency,
                        "Invalid Urgency header value '\(value)': one of very-low, low, normal, high (RFC 8030 §5.3)"))
            }
            urgency = value.lowercased()
        }
        let topic = header("topic")
        if let topic, !isTopic(topic) {
            return .failure(
                WebPushSimError(
                    400, errno: 113, .invalidTopic,
                    "Invalid Topic header value: at most 32 characters of the URL and filename safe base64 alphabet (RFC 8030 §5.4), not \(topic.count)"
                ))
        }
        let encoding = header("content-encoding")
        if body.isEmpty && encoding == nil {
            // A push message without payload (RFC 8030 §5, RFC 8291 §4 applies to payloads only).
            return .success(Checked(ttl: min(ttl, maxTTL), urgency: urgency, topic: topic, contentEncoding: nil))
        }
        guard let encoding, encoding.lowercased() == "aes128gcm" else {
            return .failure(
                WebPushSimError(
                    400, errno: 110, .invalidEncoding,
                    "Content-Encoding must be aes128gcm (RFC 8291 §4, RFC 8188), not \(encoding.map { "'\($0)'" } ?? "missing")"))
        }
        if let problem = aes128gcmProblem(body) {
            return .failure(WebPushSimError(400, errno: 110, .invalidHeader, problem))
        }
        return .success(Checked(ttl: min(ttl, maxTTL), urgency: urgency, topic: topic, contentEncoding: "aes128gcm"))
    }

    /// delta-seconds (RFC 9111 §1.2.2): digits only; a value too large for an Int is the largest.
    static func parseTTL(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text) ?? Int.max
    }

    /// 1 to 32 characters of `A-Z a-z 0-9 - _` (RFC 8030 §5.4, RFC 4648 §5).
    static func isTopic(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }

    /// Whether `bytes` is an uncompressed point on P-256 (SEC 1 §2.3.3).
    static func isP256Point(_ bytes: [UInt8]) -> Bool {
        bytes.count == 65 && bytes.first == 4 && (try? P256.KeyAgreement.PublicKey(x963Representation: bytes)) != nil
    }

    /// Why `body` is not one aes128gcm record as Web Push sends it, or nil.
    static func aes128gcmProblem(_ body: [UInt8]) -> String? {
        guard body.count >= 21 else {
            return "The aes128gcm header is cut short: \(body.count) bytes, not salt (16), rs (4) and idlen (1) (RFC 8188 §2.1)"
        }
        let rs = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idlen = Int(body[20])
        guard idlen == 65 else {
            return "The aes128gcm header's idlen is \(idlen): Web Push puts the sender's 65-byte ECDH public key in keyid (RFC 8291 §4)"
        }
        guard body.count >= headerBytes else { return "The aes128gcm keyid is cut short: \(body.count - 21) of 65 bytes (RFC 8291 §4)" }
        guard isP256Point(Array(body[21..<headerBytes])) else {
            return "The aes128gcm keyid is not an uncompressed P-256 point (RFC 8291 §4)"
        }
        guard rs >= 18 else { return "The aes128gcm record size rs is \(rs), less than 18 (RFC 8188 §2.1)" }
        let record = body.count - headerBytes
        // The padding delimiter (1) and the AEAD tag (16) at least.
        guard record >= 17 else {
            return "The aes128gcm record is \(record) bytes, shorter than a tag and a padding delimiter (17; RFC 8188 §2)"
        }
        guard record <= rs else {
            return
                "The push message is more than one aes128gcm record (\(record) bytes of ciphertext, rs \(rs)): Web Push sends exactly one (RFC 8291 §4)"
        }
        return nil
    }
}
