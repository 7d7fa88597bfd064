/// A JSON string value of the template, compiled: the terms the renderer writes between the
/// quotes, in order, with nothing left to parse.
struct ValueExpression: Sendable {
    enum Term: Sendable {
        /// Text written as it is: already JSON-escaped at compile time.
        case literal([UInt8])
        case property(PropertyReference)
    }

    let terms: [Term]
    /// A lone `"#(prop)"`: written as a bare JSON number when the value is one.
    let numberWhenNumeric: Bool

    var propertyCount: Int {
        terms.count { if case .property = $0 { true } else { false } }
    }
}

/// One of `$(prop)`, `$(prop, n)`, `.(prop, n)`, `%(prop)`, `#(prop)`.
struct PropertyReference: Sendable, Hashable {
    enum Function: Sendable, Hashable {
        /// `$(prop)`, and `#(prop)` inside `{}`.
        case text
        /// `$(prop, n)`: at most n characters.
        case clip(Int)
        /// `.(prop, n)`: at most n characters, the last three `...` when clipped.
        case ellipsis(Int)
        /// `%(prop)`: percent-encoded.
        case uriEncoded
    }

    /// The name as written, for messages.
    let name: String
    /// The name folded to lower case, for look-ups.
    let key: String
    let function: Function
    /// The RFC 6901 pointer of the string value it is in, for warnings and errors.
    let pointer: String
}
