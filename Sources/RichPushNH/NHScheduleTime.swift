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

    /// `YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]`; nil for anything else.
    static func parse(_ text: [UInt8]) -> Int64? {
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= text.count else { return nil }
            var value = 0
            for byte in text[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")), let day = number(2),
            expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")), let hour = number(2),
            expect(UInt8(ascii: ":")), let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2),
            year >= 1, (1...12).contains(month), (1...CivilTime.days(in: month, of: year)).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var millis = 0
        if expect(UInt8(ascii: ".")) {
            var digits = 0
            while index < text.count, (0x30...0x39).contains(text[index]) {
                if digits < 3 { millis = millis * 10 + Int(text[index] - 0x30) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
        } else if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
            let sign = text[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(UInt8(ascii: ":")), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 60 + minutes) * 60
        }
        guard index == text.count else { return nil }
        let seconds = CivilTime.seconds(year: year, month: month, day: day) + Int64(hour * 3600 + minute * 60 + second - offset)
        return seconds * 1000 + Int64(millis)
    }
}
