/// The bytes that make up Notification Hubs' expression language.
enum ExpressionSyntax {
    /// The first byte of `$(`, `#(`, `.(`, `%(`.
    static func isOpener(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "$") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "%")
    }

    /// The first content index at which `$(`, `#(`, `.(` or `%(` starts, if any.
    static func firstOpener(in bytes: some Collection<UInt8>) -> Int? {
        var previous: UInt8 = 0
        for (offset, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "("), isOpener(previous) { return offset - 1 }
            previous = byte
        }
        return nil
    }

    /// A property name holds ASCII letters, digits, `_`, `-` and `.`.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// The longest property name, in bytes.
    static let maxNameBytes = 128

    /// Names compare without regard to ASCII case, as Notification Hubs' do.
    static func fold(_ name: String) -> String {
        guard name.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return name }
        return String(decoding: name.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
