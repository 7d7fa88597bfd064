/// A template's `Headers` (Azure Notification Hubs' per-template platform headers): which names
/// each platform takes, what each value may be, and where a value lands on the push's request.
/// Values may use the expression language (`"apns-priority": "$(priority)"`), rendered with the
/// send's properties like the body. Any other name is refused at registration, naming it: the
/// request's own headers (`authorization`, `apns-topic`, `content-encoding`, …) belong to the
/// adapter, and FCM HTTP v1 takes no per-message headers at all (a template sets `android.ttl`,
/// `android.priority` and `android.collapse_key` in its body instead).
package enum TemplateHeaders {
    /// The headers each push format takes, as the platform spells them (names match without
    /// regard to case, as in HTTP).
    package static func allowed(_ format: PushFormat) -> [String] {
        switch format {
        case .apns: ["apns-collapse-id", "apns-expiration", "apns-priority", "apns-push-type"]
        case .fcm: []
        case .webpush: ["TTL", "Topic", "Urgency"]
        }
    }

    /// The format a registration of `platform` is rendered in by default (the worker's routing may
    /// send other platforms through the simulated hub, in the APNs format).
    package static func format(of platform: Platform) -> PushFormat {
        switch platform {
        case .fcm, .gcm: .fcm
        case .webpush: .webpush
        default: .apns
        }
    }

    /// Nil when a template of `format` may set header `name`; else why not.
    package static func nameProblem(_ name: String, format: PushFormat) -> String? {
        let allowed = allowed(format)
        guard !allowed.contains(where: { $0.lowercased() == name.lowercased() }) else { return nil }
        if allowed.isEmpty {
            return
                "header '\(name.prefix(64))' cannot be set: \(format.rawValue) templates take no headers (set android.ttl, android.priority or "
                + "android.collapse_key in the body)"
        }
        return "header '\(name.prefix(64))' cannot be set on \(format.rawValue): a template may set \(allowed.joined(separator: ", "))"
    }

    /// Applies the rendered `value` of header `name` to `push` (`now`: milliseconds since 1970, for
    /// a `TTL`); returns why the value is refused, naming the header, or nil.
    package static func apply(_ name: String, _ value: String, to push: inout RenderedPush, now: Int64) -> String? {
        let header = name.lowercased()
        func number(_ range: ClosedRange<Int>) -> Int? {
            guard (1...10).contains(value.utf8.count), value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(value),
                range.contains(number)
            else { return nil }
            return number
        }
        switch header {
        case "apns-priority":
            guard let priority = number(1...10), [5, 10].contains(priority) else {
                return "header 'apns-priority' is 5 or 10, got '\(value.prefix(32))'"
            }
            push.priority = priority
        case "apns-push-type":
            guard ["alert", "background"].contains(value) else {
                return "header 'apns-push-type' is alert or background, got '\(value.prefix(32))'"
            }
            push.pushType = value
            // Apple's rule for background pushes; an `apns-priority` applied after it may say 10,
            // and is then refused by ``combinationProblem(_:format:)``.
            if value == "background" { push.priority = 5 }
        case "apns-expiration":
            guard let seconds = number(0...9_999_999_999) else {
                return "header 'apns-expiration' is 0 or seconds since 1970, got '\(value.prefix(32))'"
            }
            push.expiration = seconds
            push.deadline = Int64(seconds) * 1000
        case "apns-collapse-id":
            guard (1...64).contains(value.utf8.count) else { return "header 'apns-collapse-id' is 1 to 64 bytes, got \(value.utf8.count)" }
            push.collapseID = value
        case "ttl":
            let most = Int(DeliveryOptions.maxTTL.components.seconds)
            guard let seconds = number(0...most) else { return "header 'TTL' is 0 to \(most) seconds, got '\(value.prefix(32))'" }
            push.deadline = seconds == 0 ? 0 : now + Int64(seconds) * 1000
            push.expiration = seconds == 0 ? 0 : Int((push.deadline + 999) / 1000)
        case "urgency":
            guard ["very-low", "low", "normal", "high"].contains(value) else {
                return "header 'Urgency' is very-low, low, normal or high, got '\(value.prefix(32))'"
            }
            push.urgency = value
        case "topic":
            guard (1...32).contains(value.utf8.count), value.utf8.allSatisfy(Self.isBase64URL) else {
                return "header 'Topic' is 1 to 32 characters of the URL-safe base64 alphabet (A-Z a-z 0-9 - _), got '\(value.prefix(40))'"
            }
            push.collapseID = value
        default:
            return "header '\(name.prefix(64))' cannot be set"
        }
        return nil
    }

    /// `headers` in the order they are applied: `apns-push-type` first (it sets the priority a
    /// background push must have), then by name.
    package static func ordered(_ headers: [String: String]) -> [(name: String, value: String)] {
        headers.map { (name: $0.key, value: $0.value) }.sorted { first, second in
            let (a, b) = (first.name.lowercased() == "apns-push-type", second.name.lowercased() == "apns-push-type")
            return a != b ? a : first.name < second.name
        }
    }

    /// Nil when no two of `headers` are one name in different cases; else that name.
    package static func duplicate(in headers: [String: String]) -> String? {
        var seen = Set<String>()
        return headers.keys.sorted().first { !seen.insert($0.lowercased()).inserted }
    }

    /// Nil when the headers, applied together, leave a push APNs takes; else why not.
    package static func combinationProblem(_ push: RenderedPush, format: PushFormat) -> String? {
        guard format == .apns, push.pushType == "background", push.priority != 5 else { return nil }
        return "headers: apns-push-type background needs apns-priority 5 (Apple's rule), got \(push.priority)"
    }

    /// A header's value as a template body, `{"v":"…"}`, so its expressions are compiled, bounded
    /// and rendered exactly as a body's string values are.
    package static func body(of value: String) -> String {
        var json = JSONWriter(capacity: value.utf8.count + 8)
        json.beginObject()
        json.field("v", value)
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}
