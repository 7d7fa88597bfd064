/// Reads a JSON array of strings (an installation's tags, read for every push) without the
/// cost of `JSONDecoder`. Accepts exactly what RFC 8259 allows for such an array, escapes and
/// surrogate pairs included; returns nil for anything else.
package enum JSONStringArray {
    package static func parse(_ bytes: some Collection<UInt8>) -> [String]? {
        parse(Array(bytes))
    }

    /// The common case, an array from a Redis reply: no copy (the generic one above, not
    /// specialised across modules, copied byte by byte).
    package static func parse(_ bytes: [UInt8]) -> [String]? {
        var reader = JSONReader(bytes: bytes)
        reader.skipSpace()
        guard reader.take(UInt8(ascii: "[")) else { return nil }
        var result: [String] = []
        reader.skipSpace()
        if reader.take(UInt8(ascii: "]")) { return reader.atEnd() ? result : nil }
        while true {
            reader.skipSpace()
            guard let element = reader.string() else { return nil }
            result.append(element)
            reader.skipSpace()
            if reader.take(UInt8(ascii: "]")) { return reader.atEnd() ? result : nil }
            guard reader.take(UInt8(ascii: ",")) else { return nil }
        }
    }
}
