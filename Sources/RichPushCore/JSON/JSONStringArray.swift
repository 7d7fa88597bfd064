/// Reads a JSON array of strings (an installation's tags, read for every push) without the
/// cost of `JSONDecoder`. Accepts exactly what RFC 8259 allows for such an array, escapes and
/// surrogate pairs included; returns nil for anything else.
public enum JSONStringArray {
    public static func parse(_ bytes: some Collection<UInt8>) -> [String]? {
        var reader = Reader(bytes: Array(bytes))
        return reader.array()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func array() -> [String]? {
            skipSpace()
            guard take(UInt8(ascii: "[")) else { return nil }
            var result: [String] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return finished(result) }
            while true {
                skipSpace()
                guard let element = string() else { return nil }
                result.append(element)
                skipSpace()
                if take(UInt8(ascii: "]")) { return finished(result) }
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }

        private mutating func finished(_ result: [String]) -> [String]? {
            skipSpace()
            return index == bytes.count ? result : nil
        }

        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var utf8: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        utf8.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    utf8.append(byte)
                }
            }
            return nil
        }

        /// After `\u`: four hex digits, and a low surrogate's `\uXXXX` after a high one.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let first = hex4() else { return nil }
            if (0xD800...0xDBFF).contains(first) {
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let second = hex4(), (0xDC00...0xDFFF).contains(second) else { return nil }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            }
            return Unicode.Scalar(first)
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { return nil }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
    }
}
