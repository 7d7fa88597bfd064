/// Strings as RFC 8259 has them: escapes decoded (a `\u` high surrogate with its low half),
/// control characters refused, and each decoded byte mapped back to the body.
extension JSONScanner {
    mutating func readString() throws(TemplateError) -> JSONString {
        let start = index
        index += 1
        var content: [UInt8] = []
        var offsets: [Int] = []
        while true {
            guard let byte = peek else { throw failure(.invalidJSON, "a string is never closed", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                offsets.append(index)
                index += 1
                return JSONString(range: start..<index, content: content, offsets: offsets)
            case UInt8(ascii: "\\"):
                let escape = index
                let scalar = try readEscape()
                let before = content.count
                content.append(contentsOf: UTF8.encode(scalar)!)
                offsets.append(contentsOf: repeatElement(escape, count: content.count - before))
            case 0..<0x20:
                throw failure(.invalidJSON, "a control character (\(describe(byte))) in a string must be escaped", at: index)
            default:
                content.append(byte)
                offsets.append(index)
                index += 1
            }
        }
    }

    /// One escape from its backslash; a `\u` high surrogate takes its low half with it.
    private mutating func readEscape() throws(TemplateError) -> Unicode.Scalar {
        let start = index
        index += 1
        guard let kind = peek else { throw failure(.invalidJSON, "a string is never closed", at: start) }
        index += 1
        switch kind {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(kind)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4(escapeAt: start)
            switch unit {
            case 0xD800...0xDBFF:
                guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw failure(.invalidJSON, "\\u\(hex(unit)) is half a surrogate pair; its low half must follow", at: start)
                }
                let lowStart = index
                index += 2
                let low = try hex4(escapeAt: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure(.invalidJSON, "\\u\(hex(unit)) must be followed by a low surrogate, not \\u\(hex(low))", at: lowStart)
                }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            case 0xDC00...0xDFFF:
                throw failure(.invalidJSON, "\\u\(hex(unit)) is half a surrogate pair with no high half before it", at: start)
            default:
                return Unicode.Scalar(unit)!
            }
        default:
            throw failure(.invalidJSON, "\\\(describe(kind)) is not a JSON escape", at: start)
        }
    }

    private mutating func hex4(escapeAt start: Int) throws(TemplateError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = hexValue(byte) else {
                throw failure(.invalidJSON, "a \\u escape needs four hexadecimal digits", at: start)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
