/// An element of an XML document NH's clients send (Atom entries holding registration
/// descriptions): its local name (the namespace prefix dropped), attributes, children and text.
package struct NHXMLElement: Sendable, Hashable {
    package var name: String
    package var attributes: [String: String]
    package var children: [NHXMLElement]
    /// The text directly inside it (character data and CDATA sections, entities replaced).
    package var text: String

    /// The first child named `name` (a local name).
    package func child(_ name: String) -> NHXMLElement? { children.first { $0.name == name } }
}

/// Why a body is not XML RichPush reads.
package struct NHXMLError: Error, Sendable, Hashable {
    package let message: String
}

/// A small XML reader for the documents NH's clients send, bounded before anything is built: at
/// most ``maxBytes``, ``maxDepth`` levels, ``maxElements`` elements, ``maxAttributes`` per element.
/// A document type declaration is refused, so no entity is ever defined or expanded (no external
/// entities, no billion laughs): only XML's five predefined entities and character references are
/// read. Comments and the XML declaration are skipped; any other processing instruction is refused.
package enum NHXML {
    package static let maxBytes = 64 * 1024
    package static let maxDepth = 16
    package static let maxElements = 512
    package static let maxAttributes = 16

    /// A qualified name without its namespace prefix.
    package static func localName(_ name: String) -> String { Reader.local(name) }

    package static func parse(_ bytes: [UInt8]) throws(NHXMLError) -> NHXMLElement {
        guard bytes.count <= maxBytes else { throw NHXMLError(message: "the document is \(bytes.count) bytes; at most \(maxBytes)") }
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0
        var elements = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        mutating func document() throws(NHXMLError) -> NHXMLElement {
            try misc()
            guard peek == UInt8(ascii: "<") else { throw fail("a document starts with an element") }
            let root = try element(depth: 1)
            try misc()
            guard index == bytes.count else { throw fail("unexpected content after the root element") }
            return root
        }

        /// Whitespace, comments and the XML declaration between elements; a DOCTYPE is refused.
        mutating func misc() throws(NHXMLError) {
            while true {
                skipSpace()
                if starts("<?") {
                    guard starts("<?xml ") || starts("<?xml?") || starts("<?xml\t") || starts("<?xml\r") || starts("<?xml\n") else {
                        throw fail("processing instructions are not accepted")
                    }
                    try skip(past: "?>")
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<!") {
                    throw fail("document type declarations (and so entity definitions) are not accepted")
                } else {
                    return
                }
            }
        }

        mutating func element(depth: Int) throws(NHXMLError) -> NHXMLElement {
            guard depth <= NHXML.maxDepth else { throw fail("elements nest deeper than \(NHXML.maxDepth) levels") }
            elements += 1
            guard elements <= NHXML.maxElements else { throw fail("more than \(NHXML.maxElements) elements") }
            index += 1  // '<'
            let qualified = try name()
            var element = NHXMLElement(name: Self.local(qualified), attributes: [:], children: [], text: "")
            while true {
                skipSpace()
                if starts("/>") {
                    index += 2
                    return element
                }
                if peek == UInt8(ascii: ">") {
                    index += 1
                    break
                }
                let attribute = try name()
                skipSpace()
                guard peek == UInt8(ascii: "=") else { throw fail("attribute '\(attribute)' needs a value") }
                index += 1
                skipSpace()
                guard let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                    throw fail("attribute '\(attribute)''s value must be quoted")
                }
                index += 1
                guard let end = bytes[index...].firstIndex(of: quote) else { throw fail("an attribute value is not closed") }
                let value = try Self.unescape(bytes[index..<end])
                index = end + 1
                guard element.attributes.count < NHXML.maxAttributes else { throw fail("more than \(NHXML.maxAttributes) attributes") }
                element.attributes[attribute] = value
            }
            // Content: text, CDATA, comments, children, until the end tag.
            var text: [UInt8] = []
            while true {
                guard index < bytes.count else { throw fail("element '\(qualified)' is not closed") }
                if starts("</") {
                    index += 2
                    let closing = try name()
                    guard closing == qualified else { throw fail("'</\(closing)>' closes '<\(qualified)>'") }
                    skipSpace()
                    guard peek == UInt8(ascii: ">") else { throw fail("an end tag is not closed") }
                    index += 1
                    element.text = try Self.text(text)
                    return element
                } else if starts("<![CDATA[") {
                    index += 9
                    guard let end = find("]]>") else { throw fail("a CDATA section is not closed") }
                    text += bytes[index..<end]
                    index = end + 3
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<!") || starts("<?") {
                    throw fail("declarations and processing instructions are not accepted inside elements")
                } else if peek == UInt8(ascii: "<") {
                    element.children.append(try self.element(depth: depth + 1))
                } else {
                    let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                    text += try Self.unescape(bytes[index..<end]).utf8
                    index = end
                }
            }
        }

        mutating func name() throws(NHXMLError) -> String {
            let start = index
            while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
            guard index > start, index - start <= 256 else { throw fail("a name was expected") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        func starts(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            return (0..<count).allSatisfy { bytes[index + $0] == text.utf8Start[$0] }
        }

        func find(_ text: StaticString) -> Int? {
            var at = index
            let count = text.utf8CodeUnitCount
            while at + count <= bytes.count {
                if (0..<count).allSatisfy({ bytes[at + $0] == text.utf8Start[$0] }) { return at }
                at += 1
            }
            return nil
        }

        mutating func skip(past text: StaticString) throws(NHXMLError) {
            guard let end = find(text) else { throw fail("'\(text)' was expected") }
            index = end + text.utf8CodeUnitCount
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        func fail(_ message: String) -> NHXMLError { NHXMLError(message: "\(message) (at byte \(index))") }

        static func local(_ name: String) -> String {
            guard let colon = name.lastIndex(of: ":") else { return name }
            return String(name[name.index(after: colon)...])
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), 0x80...0xFF:
                true
            default:
                false
            }
        }

        /// Valid UTF-8 text.
        static func text(_ bytes: [UInt8]) throws(NHXMLError) -> String {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw NHXMLError(message: "the document is not UTF-8") }
            return text
        }

        /// Character data with XML's five entities and character references replaced; any other
        /// entity is refused (none can be defined: no DOCTYPE is read).
        static func unescape(_ slice: ArraySlice<UInt8>) throws(NHXMLError) -> String {
            guard slice.contains(UInt8(ascii: "&")) else { return try text(Array(slice)) }
            var out: [UInt8] = []
            var index = slice.startIndex
            while index < slice.endIndex {
                let byte = slice[index]
                guard byte == UInt8(ascii: "&") else {
                    out.append(byte)
                    index += 1
                    continue
                }
                guard let semicolon = slice[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                    throw NHXMLError(message: "an '&' that starts no entity")
                }
                let entity = String(decoding: slice[(index + 1)..<semicolon], as: UTF8.self)
                switch entity {
                case "lt": out.append(UInt8(ascii: "<"))
                case "gt": out.append(UInt8(ascii: ">"))
                case "amp": out.append(UInt8(ascii: "&"))
                case "quot": out.append(UInt8(ascii: "\""))
                case "apos": out.append(UInt8(ascii: "'"))
                default:
                    let number: UInt32? =
                        entity.hasPrefix("#x")
                        ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                    guard let number, let scalar = Unicode.Scalar(number), number != 0 else {
                        throw NHXMLError(message: "entity '&\(entity.prefix(16));' is not one of XML's five, and no other is defined")
                    }
                    out += Array(String(Character(scalar)).utf8)
                }
                index = semicolon + 1
            }
            return try text(out)
        }
    }
}
