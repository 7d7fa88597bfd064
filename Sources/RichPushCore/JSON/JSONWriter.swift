/// Writes small JSON documents straight into bytes, for hot paths where Foundation's encoders
/// cost more than the work around them (a push payload per job, a status entry per device).
///
/// The caller decides the key order (write keys sorted to match `.sortedKeys` output). Strings
/// are escaped as RFC 8259 requires: `"`, `\` and control characters; `/` and non-ASCII are
/// written as they are (UTF-8).
package struct JSONWriter: Sendable {
    package private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    package init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    package mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    package mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma.removeLast()
    }

    /// Writes a whole document, an object's members in sorted order.
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw(Array("null".utf8))
        case .bool(let flag): raw(Array((flag ? "true" : "false").utf8))
        case .number(let digits): raw(Array(digits.utf8))
        case .string(let text): string(text)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                key(name)
                self.value(member)
            }
            endObject()
        }
    }

    /// Writes `"key":`; the value written next belongs to it.
    package mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    package mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    package mutating func integer(_ value: Int) {
        separate()
        // The digits from the end of a 20-byte stack buffer: no String per number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes raw bytes that are already a JSON value.
    package mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    package mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    package mutating func field(_ name: String, _ value: Int) {
        key(name)
        integer(value)
    }

    package mutating func field(_ name: String, _ value: Bool) {
        key(name)
        separate()
        let literal: StaticString = value ? "true" : "false"
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A comma before every value but the first of its object; values right after a key need none.
    private mutating func separate() {
        guard !needsComma.isEmpty else { return }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    /// The string between quotes: the runs that need no escape are copied whole (a byte-by-byte
    /// append was 10 % of a worker's CPU in a fan-out, writing every push's envelope).
    private mutating func appendString(_ value: String) {
        var value = value
        value.withUTF8 { source in
            bytes.append(UInt8(ascii: "\""))
            var run = 0
            for index in source.indices {
                let byte = source[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                if run < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[run..<index])) }
                appendEscape(of: byte)
                run = index + 1
            }
            if run < source.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[run...])) }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private mutating func appendEscape(of byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(hex.utf8Start[Int(byte >> 4)])
            bytes.append(hex.utf8Start[Int(byte & 0xF)])
        }
    }
}
