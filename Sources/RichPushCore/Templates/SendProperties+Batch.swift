extension SendProperties {
    /// The bytes of each element of the array member `name` (exact case) of the JSON object
    /// `body`, in order (elements nested at most `depth` deep), so each batch item's `properties`
    /// can be read with the order of its properties and locales; nil when there is no such array.
    package static func elements(ofArray name: String, in body: [UInt8], depth: Int) -> [[UInt8]]? {
        guard let members = JSONReader.rawMembers(of: body, depth: depth + 1), let array = members.first(where: { $0.name == name })?.value
        else { return nil }
        var reader = JSONReader(bytes: Array(array))
        guard reader.take(UInt8(ascii: "[")) else { return nil }
        var elements: [[UInt8]] = []
        reader.skipSpace()
        if reader.take(UInt8(ascii: "]")) { return reader.atEnd() ? elements : nil }
        while true {
            reader.skipSpace()
            let start = reader.index
            guard reader.value(depth: depth) != nil else { return nil }
            elements.append(Array(reader.bytes[start..<reader.index]))
            reader.skipSpace()
            if reader.take(UInt8(ascii: "]")) { break }
            guard reader.take(UInt8(ascii: ",")) else { return nil }
        }
        return reader.atEnd() ? elements : nil
    }
}
