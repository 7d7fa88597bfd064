import RichPushReport

/// A fragment of HTML whose interpolated values are escaped by their type.
///
/// `"<td>\(name)</td>" as HTML` escapes `name` (a `String`), inserts an `Int` as digits and
/// another `HTML` as it is; nothing else can be interpolated (there is deliberately no generic
/// `appendInterpolation`), so a value reaches a page unescaped only by being made `HTML` on
/// purpose, which `grep "HTML(trusted"` finds. This is the console's template engine: pages are
/// small, their values few, and a template language (swift-mustache) would add a dependency and
/// a second syntax to get the same escaping, checked at run time instead of by the compiler.
/// Attributes are always written between double quotes, where the escaping below is enough.
struct HTML: Sendable, ExpressibleByStringInterpolation, Hashable {
    private(set) var text: String

    /// Markup written in the code (never data).
    init(trusted text: String) { self.text = text }

    init(stringLiteral value: String) { text = value }

    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + interpolationCount * 16) }

        mutating func appendLiteral(_ literal: String) { text += literal }
        mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }
        mutating func appendInterpolation(_ value: Int) { text += String(value) }
        mutating func appendInterpolation(_ value: Int64) { text += String(value) }
        mutating func appendInterpolation(_ html: HTML) { text += html.text }
        mutating func appendInterpolation(_ parts: [HTML]) { for part in parts { text += part.text } }
    }

    /// `&`, `<`, `>`, `"` and `'` as character references, XML's forbidden control characters
    /// dropped, everything else as it is: the reports' escaping, one for all markup.
    static func escape(_ value: String) -> String { value.markupEscaped }

    /// `value` percent-encoded for a URL's query (then escaped as any string where it is interpolated).
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.filter { !$0.1.isEmpty }.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    static func percentEncode(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(width - count, 0)) + self }
}
