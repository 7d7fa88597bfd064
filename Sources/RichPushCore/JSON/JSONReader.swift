/// A strict RFC 8259 reader over bytes, shared by ``JSONStringArray`` and ``JSONValue``: reads
/// exactly what the grammar allows (escapes and surrogate pairs included), nothing more, and
/// says nil for anything else. It never recurses deeper than the caller allows.
struct JSONReader {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Only whitespace is left.
    mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Any value, nested at most `depth` arrays or objects deep.
    mutating func value(depth: Int) -> JSONValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "{"): return depth > 0 ? object(depth: depth - 1) : nil
        case UInt8(ascii: "["): return depth > 0 ? array(depth: depth - 1) : nil
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return number().map(JSONValue.number)
        }
    }

    private mutating func object(depth: Int) -> JSONValue? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(8)
        skipSpace()
        if take(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipSpace()
            guard let name = string() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")), let member = value(depth: depth) else { return nil }
            members[name] = member  // a repeated name: the last one counts, as JSONDecoder does
            skipSpace()
            if take(UInt8(ascii: "}")) { return .object(members) }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var elements: [JSONValue] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            skipSpace()
            if take(UInt8(ascii: "]")) { return .array(elements) }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { word in (0..<count).allSatisfy { bytes[index + $0] == word[$0] } }
        if matches { index += count }
        return matches
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
    private mutating func number() -> String? {
        let start = index
        _ = take(UInt8(ascii: "-"))
        if take(UInt8(ascii: "0")) {
            // no leading zeros
        } else {
            guard index < bytes.count, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
            skipDigits()
        }
        if take(UInt8(ascii: ".")) {
            guard skipDigits() > 0 else { return nil }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            _ = take(UInt8(ascii: "+")) || take(UInt8(ascii: "-"))
            guard skipDigits() > 0 else { return nil }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    /// A string, from its opening quote.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        // Most strings hold no escape: up to the closing quote, the bytes are the string.
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return StrictUTF8.string(bytes[start..<(index - 1)])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return StrictUTF8.string(utf8)
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
            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let second = hex4(), (0xDC00...0xDFFF).contains(second) else {
                return nil
            }
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
}
