extension JSONReader {
    /// An object's members in the order written (``JSONValue`` keeps a dictionary), each value
    /// read by `read`; nil for anything but an object, a value `read` refuses, or a name given twice.
    mutating func orderedMembers<Value>(_ read: (inout JSONReader) -> Value?) -> [(name: String, value: Value)]? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [(name: String, value: Value)] = []
        var seen = Set<String>()
        skipSpace()
        if take(UInt8(ascii: "}")) { return members }
        while true {
            skipSpace()
            guard let name = string(), seen.insert(name).inserted else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            guard let value = read(&self) else { return nil }
            members.append((name, value))
            skipSpace()
            if take(UInt8(ascii: "}")) { return members }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// The members of the object `bytes`, in order, each as its bytes (nested at most `depth`
    /// deep); nil when `bytes` is not one object.
    static func rawMembers(of bytes: [UInt8], depth: Int) -> [(name: String, value: ArraySlice<UInt8>)]? {
        var reader = JSONReader(bytes: bytes)
        let members = reader.orderedMembers { reader -> ArraySlice<UInt8>? in
            let start = reader.index
            guard reader.value(depth: depth) != nil else { return nil }
            return reader.bytes[start..<reader.index]
        }
        guard let members, reader.atEnd() else { return nil }
        return members
    }

    /// A value that may be an object of scalars, kept in order (a send's property).
    enum Layered {
        case scalar(JSONValue)
        case object([(name: String, value: JSONValue)])
    }

    /// The members of the object `bytes`, in order, each a scalar or an object of scalars in
    /// order; nil for anything else.
    static func layeredMembers(of bytes: [UInt8]) -> [(name: String, value: Layered)]? {
        var reader = JSONReader(bytes: bytes)
        let members = reader.orderedMembers { reader -> Layered? in
            if reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: "{") {
                return reader.orderedMembers { $0.value(depth: 0) }.map(Layered.object)
            }
            return reader.value(depth: 0).map(Layered.scalar)
        }
        guard let members, reader.atEnd() else { return nil }
        return members
    }
}
