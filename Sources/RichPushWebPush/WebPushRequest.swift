import Crypto
import RichPushCore

/// One message to one subscription as RFC 8030 §5 sends it: `POST` to the endpoint with `TTL`
/// (always), `Urgency`, `Topic` (when there is a collapse id), the `aes128gcm` content coding
/// headers, the VAPID `Authorization`, and the encrypted body. Built and checked here; the
/// adapter sends it (`Content-Length` is the transport's to set).
package struct WebPushRequest: Sendable, Hashable {
    package struct Header: Sendable, Hashable {
        package let name: String
        package let value: String
    }

    package var method: String { "POST" }
    /// The subscription's push resource, where the request goes.
    package let endpoint: String
    /// In the order they are sent.
    package let headers: [Header]
    package let body: [UInt8]

    /// When the notification set no ttl: a day, as the renderer's default for the other platforms.
    package static let defaultTTL: Duration = .seconds(86400)

    /// The request for `payload` to `subscription`; the payload limit (3,993 bytes) is checked
    /// before any cryptography.
    package init(
        payload: [UInt8], to subscription: WebPushSubscription, vapid: VAPIDSigner,
        ttl: Duration?, urgency: WebPushUrgency = .normal, collapseID: String? = nil
    ) throws(WebPushError) {
        self = try Template(ttl: ttl, urgency: urgency, collapseID: collapseID).request(payload: payload, to: subscription, vapid: vapid)
    }

    /// What every message of one notification shares, worked out once for a fan-out: the
    /// `TTL`, `Urgency` and `Topic` values.
    package struct Template: Sendable, Hashable {
        /// Seconds, never negative.
        package let ttl: Int
        package let urgency: WebPushUrgency
        /// nil when there is no collapse id.
        package let topic: String?

        /// `ttl` is the time the push service should keep the message for an offline device;
        /// nil takes `defaultTTL` (never an implicit 0, which asks for delivery now or never).
        package init(
            ttl: Duration?, urgency: WebPushUrgency = .normal, collapseID: String? = nil, defaultTTL: Duration = WebPushRequest.defaultTTL
        ) {
            self.ttl = WebPushRequest.seconds(ttl ?? defaultTTL)
            self.urgency = urgency
            self.topic = collapseID.flatMap(WebPushRequest.topic(for:))
        }

        package func request(
            payload: [UInt8], to subscription: WebPushSubscription, vapid: VAPIDSigner
        ) throws(WebPushError) -> WebPushRequest {
            let body = try WebPushEncryption.encrypt(payload, for: subscription)
            var headers = [Header(name: "TTL", value: String(ttl)), Header(name: "Urgency", value: urgency.rawValue)]
            if let topic { headers.append(Header(name: "Topic", value: topic)) }
            headers.append(Header(name: "Content-Encoding", value: "aes128gcm"))
            headers.append(Header(name: "Content-Type", value: "application/octet-stream"))
            headers.append(Header(name: "Authorization", value: try vapid.authorization(for: subscription)))
            return WebPushRequest(endpoint: subscription.endpoint, headers: headers, body: body)
        }
    }

    private init(endpoint: String, headers: [Header], body: [UInt8]) {
        self.endpoint = endpoint
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), if present.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The `TTL` for `ttl`: whole seconds rounded up (a push service told a second less would drop
    /// the message before its deadline), 0 for a ttl already run out, at most 28 days.
    package static func seconds(_ ttl: Duration) -> Int {
        guard ttl > .zero else { return 0 }
        let capped = min(ttl, DeliveryOptions.maxTTL)
        let (seconds, attoseconds) = capped.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }

    /// The `Topic` for a collapse id (RFC 8030 §5.4: at most 32 characters of the URL-safe base64
    /// alphabet): the id itself when it is one, otherwise a stable digest of it (base64url of the
    /// first 24 bytes of its SHA-256, 32 characters), so the same id always replaces the same
    /// message. nil for an empty id.
    package static func topic(for collapseID: String) -> String? {
        guard !collapseID.isEmpty else { return nil }
        let bytes = collapseID.utf8
        let fits =
            bytes.count <= 32
            && bytes.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        if fits { return collapseID }
        return Base64URL.encode(SHA256.hash(data: Array(bytes)).prefix(24))
    }
}
