import Foundation
import RichPushCore
import RichPushWebPush

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
                throw APIError.unprocessable(
                    "'Subscription' and 'pushChannel' are for platform webpush (a browser), not \(platform.rawValue)",
                    code: "subscription_not_webpush")
            }
            guard let handle = object["Handle"]?.string else {
                throw APIError.badRequest("'Handle' (the push token) is required", code: "missing_field")
            }
            return (handle, nil)
        }
        guard let (endpoint, keys) = subscription else {
            throw APIError.badRequest(
                "platform webpush needs 'Subscription' ({endpoint, keys: {p256dh, auth}}, as PushSubscription.toJSON() gives it) "
                    + "or 'pushChannel' ({endpoint, p256dh, auth})", code: "missing_field")
        }
        if let handle = object["Handle"], handle.string != endpoint {
            throw APIError.unprocessable(
                "'Handle' of a webpush registration is its subscription's endpoint; leave it out or send the same URL",
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
            guard case .object(let members) = value else {
                throw APIError.badRequest("'Subscription' must be an object", code: "wrong_type")
            }
            guard case .object(let keys)? = members["keys"] else {
                throw APIError.badRequest("'Subscription.keys' ({p256dh, auth}) is required", code: "missing_field")
            }
            return try checked(
                endpoint: members["endpoint"], p256dh: keys["p256dh"], auth: keys["auth"], in: "Subscription", keysIn: "Subscription.keys")
        case (nil, let value?):
            guard case .object(let members) = value else {
                throw APIError.badRequest("'pushChannel' must be an object", code: "wrong_type")
            }
            return try checked(
                endpoint: members["endpoint"], p256dh: members["p256dh"], auth: members["auth"], in: "pushChannel", keysIn: "pushChannel")
        case (_?, _?):
            throw APIError.badRequest("send 'Subscription' or 'pushChannel', not both", code: "wrong_type")
        }
    }

    /// The subscription checked as the Web Push adapter will read it (``WebPushSubscription``:
    /// an https endpoint, `p256dh` an uncompressed point on P-256, `auth` 16 bytes, both base64url);
    /// a problem names the field as the caller sent it.
    private static func checked(
        endpoint: JSONValue?, p256dh: JSONValue?, auth: JSONValue?, in object: String,
        keysIn: String
    ) throws -> (endpoint: String, keys: WebPushKeys) {
        guard let endpoint = endpoint?.string else {
            throw APIError.badRequest("'\(object).endpoint' (a string) is required", code: "missing_field")
        }
        if let problem = PushHandle.problem(with: endpoint, platform: .webpush) {
            throw APIError.badRequest("\(object).endpoint: \(problem)", code: "bad_handle")
        }
        guard let p256dh = p256dh?.string, let auth = auth?.string else {
            throw APIError.badRequest("'\(keysIn).p256dh' and '\(keysIn).auth' (base64url strings) are required", code: "missing_field")
        }
        let subscription: WebPushSubscription
        do {
            subscription = try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth)
        } catch {
            let field = error.field ?? "keys"
            if field.hasPrefix("keys.") {
                throw APIError.badRequest("\(keysIn).\(field.dropFirst(5)): \(error.message)", code: "bad_key")
            }
            throw APIError.badRequest("\(object).\(field): \(error.message)", code: "bad_handle")
        }
        // Stored without padding: what the encryption reads back.
        return (endpoint, WebPushKeys(p256dh: subscription.p256dhBase64URL, auth: subscription.authBase64URL))
    }
}
