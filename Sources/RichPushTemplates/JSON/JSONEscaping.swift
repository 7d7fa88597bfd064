/// Appends text to a JSON payload inside a string's quotes: `"`, `\` and the control characters
/// escaped (RFC 8259 section 7), everything else as it is in UTF-8. Runs that need no escape
/// are copied in one go, so plain text costs a scan and a copy.
enum JSONEscaping {
    static func append(_ text: Substring, to buffer: inout [UInt8]) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { append($0, to: &buffer) }
        if done == nil { append(Array(text.utf8), to: &buffer) }
    }

    static func append(_ text: String, to buffer: inout [UInt8]) {
        append(text[...], to: &buffer)
    }

    static func append(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0, to: &buffer) }
    }

    static func append(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            appendEscape(for: byte, to: &buffer)
            runStart = index + 1
        }
        if runStart < bytes.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
    }

    /// The escape of one byte that may not appear raw in a JSON string.
    private static func appendEscape(for byte: UInt8, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case 0x08: buffer.append(UInt8(ascii: "b"))
        case 0x0C: buffer.append(UInt8(ascii: "f"))
        case 0x0A: buffer.append(UInt8(ascii: "n"))
        case 0x0D: buffer.append(UInt8(ascii: "r"))
        case 0x09: buffer.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            buffer.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            buffer.append(hex.utf8Start[Int(byte >> 4)])
            buffer.append(hex.utf8Start[Int(byte & 0x0F)])
        }
    }
}
