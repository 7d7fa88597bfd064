import RichPushCore

/// `ServiceBusNotification-ScheduleTime` as NH's clients write it, in milliseconds since 1970:
/// ISO 8601 `2026-12-24T18:00:00Z`, with a fraction of any length and an offset (`+01:00`) or
/// none (read as UTC, NH's rule), and notificationhubs-rest-python's quoted `'T'`
/// (`2026-12-24'T'18:00:00`).
package enum NHScheduleTime {
    package static func milliseconds(_ header: String?) throws(NHError) -> Int64 {
        guard let header else {
            throw NHError.badRequest("a scheduled send needs ServiceBusNotification-ScheduleTime (2026-12-24T18:00:00Z)")
        }
        let text = Array(header.utf8.filter { $0 != UInt8(ascii: "'") })
        guard text.count <= 40, let value = parse(text) else {
            throw NHError.badRequest(
                "ServiceBusNotification-ScheduleTime '\(header.prefix(40))' is not an ISO 8601 time such as 2026-12-24T18:00:00Z")
        }
        return value
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]` (`t` or a space for `T`, `z` for `Z`, no zone
    /// for UTC), read as the W3C date-time it is once written so (``W3CDateTime``); nil for
    /// anything else.
    static func parse(_ text: [UInt8]) -> Int64? {
        // The seconds are required: `YYYY-MM-DDTHH:MM:SS` at least.
        guard text.count >= 19, text[16] == UInt8(ascii: ":"), [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(text[10])
        else { return nil }
        var w3c = text
        w3c[10] = UInt8(ascii: "T")
        if w3c.last == UInt8(ascii: "z") { w3c[w3c.count - 1] = UInt8(ascii: "Z") }
        // No zone after the time: UTC, NH's rule.
        if w3c.last != UInt8(ascii: "Z"), !w3c[19...].contains(UInt8(ascii: "+")), !w3c[19...].contains(UInt8(ascii: "-")) {
            w3c.append(UInt8(ascii: "Z"))
        }
        return W3CDateTime.milliseconds(String(decoding: w3c, as: UTF8.self))
    }
}
