/// The shape of a JSON text, measured in one pass before it is parsed: how deep its arrays and
/// objects nest and how many values each level holds, so a large body can be refused by its shape
/// before a tree is built for it (16 MiB of `{},` would be millions of dictionaries). It does not
/// validate: strings are skipped by their quotes and escapes, and the parser decides the rest.
struct JSONShape {
    /// Arrays and objects nest deeper than the `maxDepth` the shape was measured with (the scan
    /// stopped there; `values` is then incomplete).
    private(set) var isTooDeep = false
    /// `values[d]`: the values (array elements, object members) held by all the containers at
    /// depth `d + 1`; the document's own array or object is at depth 1.
    private(set) var values: [Int] = []

    init(_ bytes: [UInt8], maxDepth: Int) {
        var level = 0
        // Just after `[` or `{`: the next token is the container's first value, or its end.
        var opened = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { continue }
            if opened {
                opened = false
                if byte != UInt8(ascii: "]") && byte != UInt8(ascii: "}") { values[level - 1] += 1 }
            }
            switch byte {
            case UInt8(ascii: "\""):
                while index < bytes.count {
                    let character = bytes[index]
                    index += character == UInt8(ascii: "\\") ? 2 : 1
                    if character == UInt8(ascii: "\"") { break }
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                level += 1
                guard level <= maxDepth else {
                    isTooDeep = true
                    return
                }
                if level > values.count { values.append(0) }
                opened = true
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                level = max(0, level - 1)
            case UInt8(ascii: ","):
                if level > 0 { values[level - 1] += 1 }
            default:
                break
            }
        }
    }

    /// Values held by arrays and objects at every depth.
    var totalValues: Int { values.reduce(0, +) }
}
