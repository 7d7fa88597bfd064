/// A browser push subscription's keys, as `PushSubscription.toJSON()` gives them (base64url):
/// `p256dh`, the user agent's P-256 public key (uncompressed, 65 bytes), and `auth`, the 16-byte
/// authentication secret (RFC 8291 §2). Checked by the API when registered.
package struct WebPushKeys: Sendable, Hashable, Codable {
    package var p256dh: String
    package var auth: String

    package init(p256dh: String, auth: String) {
        self.p256dh = p256dh
        self.auth = auth
    }

    /// As stored in one field: `<p256dh>.<auth>` (base64url has no `.`).
    package var stored: String { "\(p256dh).\(auth)" }

    package init?(stored: String) {
        let parts = stored.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(p256dh: String(parts[0]), auth: String(parts[1]))
    }
}
