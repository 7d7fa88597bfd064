import Foundation
import NIOCore
import RichPushCore
import RichPushQueue

/// What a caller asks to send, parsed from JSON, multipart/form-data or an empty body (bounded),
/// then checked into the draft a create stores (`draft(as:maxPayloadBytes:defaultLocale:defaultDelivery:)`).
struct NotificationInput {
    var message: String?
    var richType: RichType?
    var payload: [UInt8]?
    var contentType: String?
    var target: String?
    /// Delivery options, as sent (checked by the route).
    var ttl: String?
    var collapseId: String?
    var priority: String?
    /// RFC 3339 text, or epoch milliseconds (as a JSON integer or its decimal text).
    var sendAt: String?
    var throttlePerMinute: String?
    /// `silent` or `alert` (the push mode of this notification).
    var delivery: String?
    /// A template send's properties (JSON only; order kept, for "the first locale given").
    var properties: SendProperties?

    static let jsonFields: Set<String> = [
        "message", "richType", "payload", "contentType", "target", "ttl", "collapseId", "priority", "sendAt", "throttlePerMinute",
        "delivery", "properties",
    ]

    /// Parses a JSON body: `{"message", "richType", "payload", "contentType", "target"}` (the seed's
    /// PascalCase names are accepted too). `payload` is base64 for `img`/`sound`, text for `url`/`text`.
    static func json(_ body: ByteBuffer) throws -> NotificationInput {
        // JSONValue, not JSONSerialization: no bridging to NSNumber and NSString on every create,
        // numbers kept as written, nesting bounded.
        guard let document = JSONValue.parse(Array(buffer: body)) else {
            throw APIError.badRequest("the body is not valid JSON", code: "malformed_json")
        }
        guard case .object(let fields) = document else {
            throw APIError.badRequest("the body must be a JSON object", code: "malformed_json")
        }
        var input = try json(fields, propertiesInBody: true)
        // Read again from the bytes: the locales of a property go in the order given.
        if let properties = SendProperties.member("properties", of: Array(buffer: body)) {
            input.properties = try parseProperties(properties)
        }
        return input
    }

    /// `bytes` as a send's properties; 400 `invalid_properties` saying what is wrong.
    static func parseProperties(_ bytes: [UInt8]) throws -> SendProperties {
        do {
            return try SendProperties.parse(json: bytes)
        } catch {
            throw APIError.badRequest(error.message, code: "invalid_properties")
        }
    }

    /// The members of one JSON notification object: a single create's body, or an item of a batch
    /// (whose own `idempotencyKey` the caller took out and names in `alsoKnown`, so the message
    /// for an unknown field lists every field the item may have).
    /// `propertiesInBody`: the caller reads `properties` from the body's bytes itself (a batch
    /// takes them out of each item and reads them from the item's bytes).
    static func json(_ fields: [String: JSONValue], alsoKnown: [String] = [], propertiesInBody: Bool = false) throws -> NotificationInput {
        var input = NotificationInput()
        var rawPayload: String?
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            let name = key.prefix(1).lowercased() + key.dropFirst()
            guard jsonFields.contains(name) else {
                let known = (Array(jsonFields) + alsoKnown).sorted().joined(separator: ", ")
                throw APIError.badRequest("unknown field '\(key)'; known fields: \(known)", code: "unknown_field")
            }
            if value == .null { continue }
            if name == "properties" {
                guard propertiesInBody else {
                    throw APIError.badRequest("'properties' are read from the body's bytes (in order) by the route", code: "unknown_field")
                }
                continue
            }
            if name == "sendAt" || name == "throttlePerMinute", case .number(let number) = value {
                // An integral number in any notation (`1.7e12`) as its decimal digits.
                let integral =
                    Int64(number) == nil ? Double(number).flatMap { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : nil } : nil
                if name == "sendAt" { input.sendAt = integral ?? number } else { input.throttlePerMinute = integral ?? number }
                continue
            }
            if name == "ttl" {
                // Seconds, as a JSON integer (or its decimal text).
                if case .string(let text) = value {
                    input.ttl = text
                    continue
                }
                guard case .number(let number) = value, let seconds = Double(number), seconds == seconds.rounded(), abs(seconds) < 1e15
                else {
                    throw APIError.badRequest("field 'ttl' must be an integer number of seconds", code: "wrong_type")
                }
                input.ttl = String(Int64(seconds))
                continue
            }
            guard case .string(let text) = value else { throw APIError.badRequest("field '\(key)' must be a string", code: "wrong_type") }
            switch name {
            case "message": input.message = text
            case "richType": input.richType = RichType(rawValue: text)
            case "payload": rawPayload = text
            case "contentType": input.contentType = text
            case "collapseId": input.collapseId = text
            case "priority": input.priority = text
            case "sendAt": input.sendAt = text
            case "throttlePerMinute": input.throttlePerMinute = text
            case "delivery": input.delivery = text
            default: input.target = text
            }
        }
        if let rawPayload {
            switch input.richType ?? .image {
            case .url, .text:
                input.payload = Array(rawPayload.utf8)
            default:
                guard let data = Data(base64Encoded: rawPayload, options: .ignoreUnknownCharacters), !data.isEmpty || rawPayload.isEmpty
                else {
                    throw APIError.badRequest("'payload' is not valid base64 (for img and sound it carries the bytes)", code: "bad_base64")
                }
                input.payload = Array(data)
            }
        }
        return input
    }

    /// Parses `multipart/form-data`: text fields `message`, `richType`, `target`, and one file part
    /// (`image`, `payload`, `file` or `sound`) whose own Content-Type is kept.
    static func multipart(_ body: ByteBuffer, boundary: String) throws -> NotificationInput {
        let parts: [MultipartFormData.Part]
        do {
            parts = try MultipartFormData.parse(Array(buffer: body), boundary: boundary)
        } catch {
            throw APIError.badRequest("the multipart body cannot be parsed: \(error)", code: "malformed_multipart")
        }
        var input = NotificationInput()
        for part in parts {
            guard let name = Self.formName(part.headers["content-disposition"]) else { continue }
            let text = String(decoding: part.body, as: UTF8.self)
            switch name {
            case "message": input.message = text
            case "richType", "richtype", "type": input.richType = RichType(rawValue: text)
            case "target": input.target = text
            case "ttl": input.ttl = text
            case "collapseId": input.collapseId = text
            case "priority": input.priority = text
            case "sendAt": input.sendAt = text
            case "throttlePerMinute": input.throttlePerMinute = text
            case "delivery": input.delivery = text
            case "image", "payload", "file", "sound":
                input.payload = Array(part.body)
                input.contentType = part.headers["content-type"]
                if input.richType == nil && name == "sound" { input.richType = .sound }
            default:
                throw APIError.badRequest(
                    "unknown form field '\(name)'; known: message, richType, target, ttl, collapseId, priority, sendAt, throttlePerMinute, delivery, image (or payload, file, sound)",
                    code: "unknown_field")
            }
        }
        return input
    }

    /// The `name` of `Content-Disposition: form-data; name="image"; filename="logo.png"`.
    private static func formName(_ disposition: String?) -> String? {
        guard let disposition else { return nil }
        for parameter in disposition.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) })
        where parameter.hasPrefix("name=") {
            return String(parameter.dropFirst(5)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    /// The boundary parameter of a multipart Content-Type, checked as RFC 2046 §5.1.1 says:
    /// 1 to 70 characters of `bchars`, not ending in a space.
    static func boundary(of contentType: String) throws -> String {
        for parameter in contentType.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) })
        where parameter.lowercased().hasPrefix("boundary=") {
            var value = Substring(parameter.dropFirst(9))
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            guard (1...70).contains(value.utf8.count) else {
                throw APIError.badRequest("the multipart boundary must be 1 to 70 characters (RFC 2046)", code: "malformed_multipart")
            }
            guard value.utf8.allSatisfy(isBoundaryCharacter), value.last != " " else {
                throw APIError.badRequest("the multipart boundary holds a character RFC 2046 does not allow", code: "malformed_multipart")
            }
            return String(value)
        }
        throw APIError.badRequest("multipart/form-data needs a boundary parameter", code: "malformed_multipart")
    }

    /// RFC 2046 `bchars`: digits, letters and `'()+_,-./:=? ` and space.
    private static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: "'()+_,-./:=? ".utf8.contains(byte)
        }
    }
}

// MARK: - Checked

/// What a create checks of its input before it touches the store: rich type, message, payload,
/// media type, target and the caller's right to it, delivery options, `sendAt`. Shared by
/// `POST /api/notifications` and each item of `POST /api/notifications/batch`, so both refuse
/// the same input with the same codes and messages.
extension NotificationInput {
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
                throw APIError.unprocessable(
                    "'sendAt' must be an RFC 3339 time (2026-11-24T18:00:00Z) or epoch milliseconds", code: "bad_send_at")
            }
            milliseconds = Int64(date.timeIntervalSince1970 * 1000)
        }
        guard milliseconds <= JobQueue.nowMilliseconds() + maxScheduleAhead else {
            throw APIError.unprocessable("'sendAt' may be at most 7 days ahead", code: "bad_send_at")
        }
        return milliseconds
    }

    /// `ttl` (0 to 28 days in seconds), `collapseId` (1 to 64 bytes), `priority` (high, normal),
    /// `delivery` (silent, alert, auto).
    func deliveryOptions() throws -> DeliveryOptions {
        var options = DeliveryOptions()
        if let ttl {
            guard let seconds = Int64(ttl), (0...Int64(DeliveryOptions.maxTTL.components.seconds)).contains(seconds) else {
                throw APIError.unprocessable(
                    "'ttl' must be 0 to \(DeliveryOptions.maxTTL.components.seconds) seconds (28 days)", code: "bad_ttl")
            }
            options.ttl = .seconds(seconds)
        }
        if let collapseID = collapseId {
            guard (1...DeliveryOptions.maxCollapseIDBytes).contains(collapseID.utf8.count),
                collapseID.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
            else {
                throw APIError.unprocessable(
                    "'collapseId' must be 1 to \(DeliveryOptions.maxCollapseIDBytes) printable ASCII characters", code: "bad_collapse_id")
            }
            options.collapseID = collapseID
        }
        if let priority {
            guard let value = DeliveryOptions.Priority(rawValue: priority) else {
                throw APIError.unprocessable("'priority' must be high or normal", code: "bad_priority")
            }
            options.priority = value
        }
        if let throttle = throttlePerMinute {
            guard let value = Int(throttle), (1...DeliveryOptions.maxThrottlePerMinute).contains(value) else {
                throw APIError.unprocessable(
                    "'throttlePerMinute' must be 1 to \(DeliveryOptions.maxThrottlePerMinute)", code: "bad_throttle")
            }
            options.throttlePerMinute = value
        }
        if let delivery {
            guard let mode = PushRenderer.Mode(rawValue: delivery) else {
                throw APIError.unprocessable("'delivery' must be silent, alert or auto", code: "bad_delivery")
            }
            options.mode = mode
        }
        return options
    }

    /// The draft this input asks for, as `user` may send it: every check a create makes before it
    /// touches the store (the single create and each item of a batch alike). `defaultLocale` is
    /// the app's, kept with a template send so it renders as it was accepted; `defaultDelivery`,
    /// the app's, is kept with a send that names no `delivery` of its own.
    func draft(
        as user: User, maxPayloadBytes: Int, defaultLocale: String?, defaultDelivery: PushRenderer.Mode? = nil
    ) throws
        -> NotificationDraft
    {
        let richType = self.richType ?? .image
        guard richType.isKnown else {
            throw APIError.unprocessable(
                "unknown rich type '\(richType)'; known: \(RichType.known.map(\.rawValue).joined(separator: ", "))",
                code: "unknown_rich_type")
        }
        let message = self.message ?? RichNotification.defaultMessage
        guard (1...RichNotification.maxMessageLength).contains(message.utf8.count) else {
            throw APIError.unprocessable("'message' must be 1 to \(RichNotification.maxMessageLength) bytes of UTF-8", code: "bad_message")
        }
        guard let payload, !payload.isEmpty else {
            throw APIError.unprocessable("a payload is required for rich type '\(richType)'", code: "missing_payload")
        }
        guard payload.count <= maxPayloadBytes else {
            throw APIError.tooLarge("the payload is \(payload.count) bytes; the limit is \(maxPayloadBytes)")
        }
        if richType == .url {
            let text = String(decoding: payload, as: UTF8.self)
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil
            else {
                throw APIError.unprocessable("a 'url' payload must be an http(s) URL", code: "bad_url")
            }
        }
        let contentType = try Self.declaredType(self.contentType) ?? MediaType.infer(for: richType.rawValue, payload: payload)
        let ownTag = Installation.userTag(user.name)
        let target = self.target?.trimmingCharacters(in: .whitespaces) ?? ownTag
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
        var draft = NotificationDraft(
            message: message, richType: richType, contentType: contentType, payload: payload, creator: user.name, target: target,
            delivery: try deliveryOptions())
        draft.sendAt = try sendAt.map(Self.sendAt)
        draft.properties = properties
        draft.properties?.defaultLocale = defaultLocale
        if draft.delivery.mode == nil { draft.delivery.mode = defaultDelivery }
        if let mode = draft.delivery.mode, mode != .silent, let limit = Self.attachmentLimits[richType], payload.count > limit.bytes {
            throw APIError.unprocessable(
                "the payload is \(payload.count) bytes; an iOS notification service extension attaches \(limit.name) of at most "
                    + "\(limit.bytes) bytes, so a \(mode.rawValue) delivery would show the alert without it (send it silent, or smaller)",
                code: "attachment_too_large")
        }
        return draft
    }

    /// What an iOS notification service extension may attach, by rich type (Apple's
    /// `UNNotificationAttachment`: images 10 MB, audio 5 MB, video 50 MB): an alert or auto
    /// delivery of a larger payload is refused at send time.
    static let attachmentLimits: [RichType: (name: String, bytes: Int)] = [
        .image: ("an image", 10_000_000), .sound: ("audio", 5_000_000),
    ]

    /// The payload type the sender declared, if it is one a device shows (415 otherwise); nil
    /// when none was, or `application/octet-stream` (then it is inferred from the bytes).
    static func declaredType(_ declared: String?) throws -> String? {
        guard let declared, MediaType.essence(of: declared).lowercased() != "application/octet-stream" else { return nil }
        guard MediaType.isValid(declared) else {
            throw APIError.unprocessable("'contentType' is not a media type", code: "bad_content_type")
        }
        guard MediaType.isShown(declared) else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_payload_type",
                message:
                    "payload type '\(MediaType.essence(of: declared).prefix(100))' is not one a device shows; accepted: \(MediaType.shown.joined(separator: ", "))"
            )
        }
        return declared
    }
}
