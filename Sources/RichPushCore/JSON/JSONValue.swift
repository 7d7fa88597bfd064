/// A JSON document read without `JSONDecoder` or `JSONSerialization`, for hot paths that look at a
/// few members of small documents (the device simulator reads every push it gets this way).
/// Strict RFC 8259 (see ``JSONReader``); numbers keep their text, so nothing is rounded.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number as written (`-1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The document, or nil when `bytes` is not exactly one JSON value (whitespace around it
    /// allowed) or nests arrays and objects deeper than `maxDepth`.
    package static func parse(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONValue? {
        var reader = JSONReader(bytes: bytes)
        guard let value = reader.value(depth: maxDepth), reader.atEnd() else { return nil }
        return value
    }

    /// The member `name` of an object; nil for anything else.
    package subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[name]
    }

    package var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// An integral number that fits an `Int` (written without fraction or exponent).
    package var int: Int? {
        guard case .number(let text) = self else { return nil }
        return Int(text)
    }
}
