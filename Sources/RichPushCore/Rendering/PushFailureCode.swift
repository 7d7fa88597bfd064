/// The bounded name of why a push failed, for counting failures by reason per app (the console's
/// "failed/s by reason"): the platform's own code where its answer carries one (APNs' `reason`
/// such as `BadDeviceToken`, FCM's `errorCode` or status such as `UNREGISTERED`), an HTTP status
/// as `http_<status>` (Web Push, a body that names no reason), else one of a few fixed names.
///
/// A ``PushOutcome``'s reason is free text written for a person (it carries timestamps, the
/// provider's message, a transport error): counted as it is, each failure could open a group of
/// its own. A code is at most ``maxLength`` bytes of `[A-Za-z0-9_.-]`; anything else is
/// ``other``. The Redis side bounds the number of codes per app again, whatever a worker sends.
package enum PushFailureCode {
    /// No answer in time.
    package static let timeout = "timeout"
    /// No answer at all: the connection failed, closed or was refused before the service answered.
    package static let unreachable = "unreachable"
    /// This worker has no adapter for the device's platform.
    package static let noAdapter = "no_adapter"
    /// The app has no credentials for the device's platform.
    package static let noCredentials = "no_credentials"
    /// Anything not named otherwise.
    package static let other = "other"
    /// The longest code, in bytes.
    package static let maxLength = 48

    /// The code of `reason`, as the adapters write it (see the cases in the tests).
    package static func code(for reason: String) -> String {
        var text = Substring(reason.prefix(512))
        while text.first == " " { text = text.dropFirst() }
        // APNs and FCM put a rejection they found before sending after this.
        if text.hasPrefix("never sent: ") { text = text.dropFirst("never sent: ".count) }
        // Web Push's `413: …`, `500 from the push service (…)`.
        if let code = status(text.prefix(3)), text.dropFirst(3).first.map({ $0 == ":" || $0 == " " }) ?? true { return "http_\(code)" }
        // The whole reason is a code: APNs' `reason` (an unknown one kept as its text too).
        if isCode(text) { return String(text) }
        // FCM's `UNREGISTERED: <message>`, an APNs rejection's `PayloadTooLarge: <message>`.
        if let colon = text.firstIndex(of: ":"), isCode(text[..<colon]), text[..<colon].contains(where: \.isUppercase) {
            return String(text[..<colon])
        }
        // APNs' 410 for a device that registered again since: `Unregistered at <date>, but …`.
        if let space = text.firstIndex(of: " "), text.hasSuffix("but the registration is newer"), isCode(text[..<space]) {
            return String(text[..<space])
        }
        // A status alone: APNs' or FCM's `HTTP 503` (a body that is not theirs), Web Push's
        // `the push service answered 410: …` (its `413: …` and `500 from …` are read above).
        if text.hasPrefix("HTTP "), let code = status(text.dropFirst(5).prefix(3)), text.count == 8 { return "http_\(code)" }
        if text.hasPrefix("the push service answered "), let code = status(text.dropFirst("the push service answered ".count).prefix(3)) {
            return "http_\(code)"
        }
        let lower = text.lowercased()
        if lower.contains("timeout") || lower.contains("in time") || lower.contains("timed out") { return timeout }
        if lower.hasPrefix("no answer") || lower.hasPrefix("not sent") || lower.hasPrefix("cannot reach")
            || lower.contains("did not answer")
            || lower.contains("unreachable") || lower.contains("connection") || lower.contains("reset the stream")
            || lower.contains("refused the stream")
            || lower.hasPrefix("no reply from redis") || lower.hasPrefix("redis answered")
        {
            return unreachable
        }
        if lower.hasPrefix("this worker has no adapter") { return noAdapter }
        if lower.contains(" credentials; set them with richpush apps set") { return noCredentials }
        return other
    }

    /// Whether `text` may be counted as it is: 1 to ``maxLength`` bytes of `[A-Za-z0-9_.-]`.
    package static func isCode(_ text: Substring) -> Bool {
        let bytes = text.utf8
        return !bytes.isEmpty && bytes.count <= maxLength
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                    || byte == 0x2E || byte == 0x2D
            }
    }

    /// An HTTP status (three digits, 100–599).
    private static func status(_ text: Substring) -> Int? {
        guard text.utf8.count == 3, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text), (100...599).contains(value)
        else { return nil }
        return value
    }
}
