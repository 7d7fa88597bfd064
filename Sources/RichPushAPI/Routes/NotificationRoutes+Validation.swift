import Foundation
import RichPushCore
import RichPushQueue

/// What a create checks of its input before it touches the store: rich type, message, payload,
/// media type, target and the caller's right to it, delivery options, `sendAt`. Shared by
/// `POST /api/notifications` and each item of `POST /api/notifications/batch`, so both refuse
/// the same input with the same codes and messages.
extension NotificationRoutes {
    /// Sends are scheduled at most this far ahead (Azure Notification Hubs' Standard tier).
    static let maxScheduleAhead: Int64 = 7 * 86_400_000

    /// `sendAt`: RFC 3339 (`2026-11-24T18:00:00Z`, fractions and offsets allowed) or epoch ms; at
    /// most 7 days ahead; a time in the past means now.
    static func sendAt(_ text: String) throws -> Int64 {
        let milliseconds: Int64
        if let number = Int64(text) {
            milliseconds = number
        } else {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let plain = ISO8601DateFormatter()
            guard text.utf8.count <= 64, let date = formatter.date(from: text) ?? plain.date(from: text) else {
                throw APIError.unprocessable("'sendAt' must be an RFC 3339 time (2026-11-24T18:00:00Z) or epoch milliseconds", code: "bad_send_at")
            }
            milliseconds = Int64(date.timeIntervalSince1970 * 1000)
        }
        guard milliseconds <= JobQueue.nowMilliseconds() + maxScheduleAhead else {
            throw APIError.unprocessable("'sendAt' may be at most 7 days ahead", code: "bad_send_at")
        }
        return milliseconds
    }

    /// `ttl` (0 to 28 days in seconds), `collapseId` (1 to 64 bytes), `priority` (high, normal).
    static func deliveryOptions(_ input: NotificationInput) throws -> DeliveryOptions {
        var options = DeliveryOptions()
        if let ttl = input.ttl {
            guard let seconds = Int64(ttl), (0...Int64(DeliveryOptions.maxTTL.components.seconds)).contains(seconds) else {
                throw APIError.unprocessable("'ttl' must be 0 to \(DeliveryOptions.maxTTL.components.seconds) seconds (28 days)", code: "bad_ttl")
            }
            options.ttl = .seconds(seconds)
        }
        if let collapseID = input.collapseId {
            guard (1...DeliveryOptions.maxCollapseIDBytes).contains(collapseID.utf8.count), collapseID.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw APIError.unprocessable("'collapseId' must be 1 to \(DeliveryOptions.maxCollapseIDBytes) printable ASCII characters", code: "bad_collapse_id")
            }
            options.collapseID = collapseID
        }
        if let priority = input.priority {
            guard let value = DeliveryOptions.Priority(rawValue: priority) else {
                throw APIError.unprocessable("'priority' must be high or normal", code: "bad_priority")
            }
            options.priority = value
        }
        if let throttle = input.throttlePerMinute {
            guard let value = Int(throttle), (1...DeliveryOptions.maxThrottlePerMinute).contains(value) else {
                throw APIError.unprocessable("'throttlePerMinute' must be 1 to \(DeliveryOptions.maxThrottlePerMinute)", code: "bad_throttle")
            }
            options.throttlePerMinute = value
        }
        return options
    }

    /// The draft `input` asks for, as `user` may send it: every check a create makes before it
    /// touches the store (the single create and each item of a batch alike).
    func validate(_ input: NotificationInput, user: User) throws -> NotificationDraft {
        let richType = input.richType ?? .image
        guard richType.isKnown else {
            throw APIError.unprocessable("unknown rich type '\(richType)'; known: \(RichType.known.map(\.rawValue).joined(separator: ", "))", code: "unknown_rich_type")
        }
        let message = input.message ?? RichNotification.defaultMessage
        guard (1...RichNotification.maxMessageLength).contains(message.utf8.count) else {
            throw APIError.unprocessable("'message' must be 1 to \(RichNotification.maxMessageLength) bytes of UTF-8", code: "bad_message")
        }
        guard let payload = input.payload, !payload.isEmpty else {
            throw APIError.unprocessable("a payload is required for rich type '\(richType)'", code: "missing_payload")
        }
        guard payload.count <= configuration.maxPayloadBytes else {
            throw APIError.tooLarge("the payload is \(payload.count) bytes; the limit is \(configuration.maxPayloadBytes)")
        }
        if richType == .url {
            let text = String(decoding: payload, as: UTF8.self)
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                throw APIError.unprocessable("a 'url' payload must be an http(s) URL", code: "bad_url")
            }
        }
        let contentType = try Self.declaredType(input.contentType) ?? MediaType.infer(for: richType.rawValue, payload: payload)
        let ownTag = Installation.userTag(user.name)
        let target = input.target?.trimmingCharacters(in: .whitespaces) ?? ownTag
        // The role first: a plain user's target is their own tag or nothing, so their input never
        // reaches the parser.
        guard target == ownTag || user.role == .admin else {
            throw APIError.forbidden("only admins may send to other tags than \(ownTag)")
        }
        do {
            _ = try TagExpression(parsing: target)
        } catch {
            throw APIError.unprocessable("bad target: \(error.message)", code: "bad_target")
        }
        var draft = NotificationDraft(message: message, richType: richType, contentType: contentType, payload: payload, creator: user.name, target: target,
                                      delivery: try Self.deliveryOptions(input))
        draft.sendAt = try input.sendAt.map(Self.sendAt)
        draft.properties = input.properties
        draft.properties?.defaultLocale = defaultLocale
        return draft
    }

    /// The payload type the sender declared, if it is one a device shows (415 otherwise); nil
    /// when none was, or `application/octet-stream` (then it is inferred from the bytes).
    static func declaredType(_ declared: String?) throws -> String? {
        guard let declared, MediaType.essence(of: declared).lowercased() != "application/octet-stream" else { return nil }
        guard MediaType.isValid(declared) else { throw APIError.unprocessable("'contentType' is not a media type", code: "bad_content_type") }
        guard MediaType.isShown(declared) else {
            throw APIError(.unsupportedMediaType, code: "unsupported_payload_type",
                           message: "payload type '\(MediaType.essence(of: declared).prefix(100))' is not one a device shows; accepted: \(MediaType.shown.joined(separator: ", "))")
        }
        return declared
    }
}
