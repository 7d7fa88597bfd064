/// A W3C date-time (W3C-DTF, the profile of ISO 8601 Notification Hubs' documents use): a date
/// alone, midnight UTC (`2026-12-24`), or a date and a time to the minute, second or any fraction
/// with its zone, `Z` or `±hh:mm` (`2026-12-24T18:00Z`, `2026-12-24T18:00:00.5+01:00`). A
/// template's expiry (``TemplateExpiry``) and NH's schedule time are read with it.
package enum W3CDateTime {
    /// The instant `text` names, in milliseconds since 1970; nil if it is not a W3C date-time.
    package static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), year >= 1, take(UInt8(ascii: "-")), let month = number(2), (1...12).contains(month),
            take(UInt8(ascii: "-")), let day = number(2), (1...CivilTime.days(in: month, of: year)).contains(day)
        else { return nil }
        guard take(UInt8(ascii: "T")) else {
            return index == bytes.count ? CivilTime.seconds(year: year, month: month, day: day) * 1000 : nil
        }
        guard let hour = number(2), hour < 24, take(UInt8(ascii: ":")), let minute = number(2), minute < 60 else { return nil }
        var (second, millis) = (0, 0)
        if take(UInt8(ascii: ":")) {
            guard let seconds = number(2), seconds < 60 else { return nil }
            second = seconds
            if take(UInt8(ascii: ".")) {
                // Any number of digits (.NET writes seven); milliseconds kept.
                var digits = 0
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                    if digits < 3 { millis = millis * 10 + Int(bytes[index] - 0x30) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                if digits < 3 { for _ in digits..<3 { millis *= 10 } }
            }
        }
        // The time zone designator W3C-DTF requires with a time: Z or ±hh:mm.
        var offset = 0
        if !take(UInt8(ascii: "Z")) {
            let sign = take(UInt8(ascii: "+")) ? 1 : take(UInt8(ascii: "-")) ? -1 : 0
            guard sign != 0, let hours = number(2), hours < 24, take(UInt8(ascii: ":")), let minutes = number(2), minutes < 60 else {
                return nil
            }
            offset = sign * (hours * 60 + minutes) * 60
        }
        guard index == bytes.count else { return nil }
        let seconds = CivilTime.seconds(year: year, month: month, day: day) + Int64(hour * 3600 + minute * 60 + second - offset)
        return seconds * 1000 + Int64(millis)
    }
}
