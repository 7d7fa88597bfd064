import Crypto
import Foundation
import RichPushCore

extension RegistrationRoutes {
    /// The registration's handle, and for platform `webpush` the subscription's keys.
    ///
    /// A browser registers its subscription as `PushSubscription.toJSON()` gives it
    /// (`"Subscription": {"endpoint", "keys": {"p256dh", "auth"}}`, `expirationTime` ignored) or in
    /// Azure Notification Hubs' shape (`"pushChannel": {"endpoint", "p256dh", "auth"}`); the
    /// endpoint is the handle (`Handle`, when also sent, must be the same). Other platforms send
    /// `Handle` and no subscription.
    static func handle(_ object: [String: JSONValue], platform: Platform) throws -> (handle: String, keys: WebPushKeys?) {
        let subscription = try self.subscription(object)
        guard platform == .webpush else {
            if subscription != nil {
                throw APIError.unprocessable("'Subscription' and 'pushChannel' are for platform webpush (a browser), not \(platform.rawValue)",
                                             code: "subscription_not_webpush")
            }
            guard let handle = object["Handle"]?.string else { throw APIError.badRequest("'Handle' (the push token) is required", code: "missing_field") }
            return (handle, nil)
        }
        guard let (endpoint, keys) = subscription else {
            throw APIError.badRequest("platform webpush needs 'Subscription' ({endpoint, keys: {p256dh, auth}}, as PushSubscription.toJSON() gives it) "
                                      + "or 'pushChannel' ({endpoint, p256dh, auth})", code: "missing_field")
        }
        if let handle = object["Handle"], handle.string != endpoint {
            throw APIError.unprocessable("'Handle' of a webpush registration is its subscription's endpoint; leave it out or send the same URL",
                                         code: "handle_not_endpoint")
        }
        return (endpoint, keys)
    }

    /// `Subscription` or `pushChannel` (not both), checked: nil when neither was sent.
    private static func subscription(_ object: [String: JSONValue]) throws -> (endpoint: String, keys: WebPushKeys)? {
        switch (object["Subscription"], object["pushChannel"]) {
        case (nil, nil), (.null?, nil), (nil, .null?):
            return nil
        case (let value?, nil):
            guard case .object(let members) = value else { throw APIError.badRequest("'Subscription' must be an object", code: "wrong_type") }
            guard case .object(let keys)? = members["keys"] else {
                throw APIError.badRequest("'Subscription.keys' ({p256dh, auth}) is required", code: "missing_field")
            }
            return try checked(endpoint: members["endpoint"], p256dh: keys["p256dh"], auth: keys["auth"], in: "Subscription", keysIn: "Subscription.keys")
        case (nil, let value?):
            guard case .object(let members) = value else { throw APIError.badRequest("'pushChannel' must be an object", code: "wrong_type") }
            return try checked(endpoint: members["endpoint"], p256dh: members["p256dh"], auth: members["auth"], in: "pushChannel", keysIn: "pushChannel")
        case (_?, _?):
            throw APIError.badRequest("send 'Subscription' or 'pushChannel', not both", code: "wrong_type")
        }
    }

    /// RFC 8291 §2 and §3: `p256dh` an uncompressed point on P-256 (65 bytes), `auth` 16 bytes,
    /// both base64url; the endpoint an https URL.
    private static func checked(endpoint: JSONValue?, p256dh: JSONValue?, auth: JSONValue?, in object: String,
                                keysIn: String) throws -> (endpoint: String, keys: WebPushKeys) {
        guard let endpoint = endpoint?.string else { throw APIError.badRequest("'\(object).endpoint' (a string) is required", code: "missing_field") }
        if let problem = PushHandle.problem(with: endpoint, platform: .webpush) {
            throw APIError.badRequest("\(object).endpoint: \(problem)", code: "bad_handle")
        }
        guard let p256dh = p256dh?.string, let auth = auth?.string else {
            throw APIError.badRequest("'\(keysIn).p256dh' and '\(keysIn).auth' (base64url strings) are required", code: "missing_field")
        }
        let key = p256dh.utf8.count <= 128 ? Base64URL.decode(p256dh.trimmingCharacters(in: ["="])) : nil
        guard let key, key.count == 65, key.first == 0x04, (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil else {
            throw APIError.badRequest("\(keysIn).p256dh: not an uncompressed P-256 public key (65 bytes, base64url)", code: "bad_key")
        }
        let secret = auth.utf8.count <= 64 ? Base64URL.decode(auth.trimmingCharacters(in: ["="])) : nil
        guard let secret, secret.count == 16 else {
            throw APIError.badRequest("\(keysIn).auth: not a 16-byte authentication secret (base64url)", code: "bad_key")
        }
        // Stored as sent, without padding: what the encryption reads back.
        return (endpoint, WebPushKeys(p256dh: Base64URL.encode(key), auth: Base64URL.encode(secret)))
    }
}
