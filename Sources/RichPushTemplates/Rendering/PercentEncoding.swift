/// `%(prop)`: the value's UTF-8 bytes percent-encoded, all but RFC 3986's unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`), hex in upper case; what .NET's `Uri.EscapeDataString`, behind
/// Notification Hubs, writes. The output is ASCII that JSON needs no escape for.
enum PercentEncoding {
    static func append(_ text: String, to buffer: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        for byte in text.utf8 {
            if isUnreserved(byte) {
                buffer.append(byte)
            } else {
                buffer.append(UInt8(ascii: "%"))
                buffer.append(hex.utf8Start[Int(byte >> 4)])
                buffer.append(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
