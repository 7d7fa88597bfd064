/// Reads the expression in one JSON string value, as Notification Hubs' templates page has the
/// language. A value is one of three things:
/// - plain text, with no `$(`, `#(`, `.(` or `%(` in it: written as it is;
/// - one call and nothing else: `"$(prop)"`, `"$(prop, n)"`, `".(prop, n)"`, `"%(prop)"`,
///   `"#(prop)"` (the last a bare JSON number when its value is one);
/// - `{…}`: calls and quoted literals joined by `+`, the whole value.
///
/// Anything else holding a call is refused, with the way to write it: Notification Hubs would
/// deliver `"Some other text. $(message)"` verbatim (azure-notificationhubs #39).
/// Single pass, no recursion: each byte is looked at a bounded number of times.
struct ExpressionParser {
    private let string: JSONString
    private let pointer: String
    private let body: [UInt8]
    private let configuration: Template.Configuration
    var index = 0

    var content: [UInt8] { string.content }

    init(_ string: JSONString, pointer: String, body: [UInt8], configuration: Template.Configuration) {
        self.string = string
        self.pointer = pointer
        self.body = body
        self.configuration = configuration
    }

    /// The value's expression, or nil for plain text.
    mutating func parse() throws(TemplateError) -> ValueExpression? {
        guard let first = content.first else { return nil }
        if first == UInt8(ascii: "{") { return try braces() }
        if isCallStart(0) {
            let (reference, isNumber) = try call(inBraces: false)
            if index == content.count {
                return ValueExpression(terms: [.property(reference)], numberWhenNumeric: isNumber)
            }
            try refuseTrailingText()
        }
        if let opener = ExpressionSyntax.firstOpener(in: content) { throw mixedWithText(at: opener) }
        return nil
    }

    // MARK: - {…}

    private mutating func braces() throws(TemplateError) -> ValueExpression {
        index = 1
        var terms: [ValueExpression.Term] = []
        var literal: (bytes: [UInt8], start: Int)?
        // Whether the text so far may end in '$', '#', '.' or '%' (a literal's last byte, the
        // dots of `.(prop, n)`), calls between that may be empty not counting.
        var mayEndInOpener = false
        var termCount = 0
        while true {
            skipSpaces()
            guard index < content.count else { throw neverClosed() }
            termCount += 1
            guard termCount <= configuration.maxTermsPerExpression else {
                throw failure(.tooManyExpressions, "an expression joins more than \(configuration.maxTermsPerExpression) terms", at: index)
            }
            let byte = content[index]
            if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                let start = index
                let text = try quoted()
                if literal == nil { literal = ([], start) }
                literal!.bytes += text
            } else if isCallStart(index) {
                if let pending = literal {
                    terms.append(try literalTerm(pending, afterOpener: &mayEndInOpener))
                    literal = nil
                }
                let reference = try call(inBraces: true).reference
                if case .ellipsis = reference.function { mayEndInOpener = true }
                terms.append(.property(reference))
            } else {
                throw unexpectedTerm(isFirst: termCount == 1)
            }
            skipSpaces()
            guard index < content.count else { throw neverClosed() }
            let next = content[index]
            index += 1
            if next == UInt8(ascii: "+") { continue }
            if next == UInt8(ascii: "}") { break }
            index -= 1
            if next == UInt8(ascii: ")") {
                throw failure(.unbalancedParentheses, "')' without a matching '('", at: index)
            }
            if next == UInt8(ascii: "'") || next == UInt8(ascii: "\"") || isCallStart(index) {
                throw failure(.invalidExpression, "expected '+' between two terms", at: index)
            }
            throw failure(.invalidExpression, "expected '+' or '}', found \(describe(at: index))", at: index)
        }
        if let pending = literal { terms.append(try literalTerm(pending, afterOpener: &mayEndInOpener)) }
        if index < content.count {
            if content[index...].contains(UInt8(ascii: "}")), !content[index...].contains(UInt8(ascii: "{")) {
                throw failure(.unbalancedBraces, "'}' without a matching '{'", at: content[index...].firstIndex(of: UInt8(ascii: "}"))!)
            }
            let tail = String(decoding: content[index...], as: UTF8.self)
            throw failure(
                .expressionMixedWithText,
                "text after the expression's closing '}' would be delivered verbatim; move it inside as a literal: … + \(Self.quote(tail) ?? "'…'")}",
                at: index)
        }
        return ValueExpression(terms: terms, numberWhenNumeric: false)
    }

    /// `'text'` or `"text"`: everything up to the same quote, as it is (no escapes).
    private mutating func quoted() throws(TemplateError) -> [UInt8] {
        let start = index
        let quote = content[index]
        index += 1
        guard let end = content[index...].firstIndex(of: quote) else {
            throw failure(.invalidExpression, "the literal starting here is never closed with \(describe(at: start))", at: start)
        }
        let text = Array(content[index..<end])
        index = end + 1
        return text
    }

    /// Adjacent literals joined; refused if they spell a call, which quotes do not expand, or
    /// if their '(' would follow a '$', '#', '.' or '%' of the template's own making
    /// (`{.(title, 9) + '(more)'}` renders `...(more)`): what leaves must never read as an
    /// unrendered expression.
    private func literalTerm(_ literal: (bytes: [UInt8], start: Int), afterOpener: inout Bool) throws(TemplateError) -> ValueExpression.Term
    {
        if let opener = ExpressionSyntax.firstOpener(in: literal.bytes) {
            let call = String(decoding: literal.bytes[opener...].prefix(2), as: UTF8.self)
            throw failure(
                .expressionInLiteral,
                "a literal holds '\(call)', but quotes do not expand expressions: close the literal and join the call with '+' ({'Hi ' + $(name)})",
                at: literal.start)
        }
        if afterOpener, literal.bytes.first == UInt8(ascii: "(") {
            throw failure(
                .expressionInLiteral,
                "this '(' may follow a '$', '#', '.' or '%' (or the '...' of .(prop, n)) and read as an unrendered expression; start the literal with a space: ' ('",
                at: literal.start)
        }
        if let last = literal.bytes.last { afterOpener = ExpressionSyntax.isOpener(last) }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(literal.bytes.count)
        JSONEscaping.append(literal.bytes, to: &escaped)
        return .literal(escaped)
    }

    /// Why what starts at `index` is not a term.
    private func unexpectedTerm(isFirst: Bool) -> TemplateError {
        let byte = content[index]
        if byte == UInt8(ascii: "}") {
            return isFirst
                ? failure(.invalidExpression, "'{}' holds no expression", at: index)
                : failure(.invalidExpression, "expected a term after '+'", at: index)
        }
        if byte == 0xE2, index + 2 < content.count, content[index + 1] == 0x80, [0x98, 0x99, 0x9C, 0x9D].contains(content[index + 2]) {
            return failure(.invalidExpression, "a literal takes ASCII quotes (' or \"), not typographic ones (‘ ’ “ ”)", at: index)
        }
        if byte == UInt8(ascii: "{") {
            return failure(.invalidExpression, "braces do not nest: one {…} holds the whole value", at: index)
        }
        if byte == UInt8(ascii: ")") {
            return failure(.unbalancedParentheses, "')' without a matching '('", at: index)
        }
        var end = index
        while end < content.count, ExpressionSyntax.isNameByte(content[end]) { end += 1 }
        if end == index, end < content.count, !ExpressionSyntax.isSpace(content[end]) { end += 1 }
        if end < content.count, content[end] == UInt8(ascii: "(") {
            let name = String(decoding: content[index...end], as: UTF8.self)
            return failure(
                .unknownFunction, "unknown function '\(name)': the language has $(prop), $(prop, n), .(prop, n), %(prop) and #(prop)",
                at: index)
        }
        return failure(
            .invalidExpression, "expected $(prop), .(prop, n), %(prop), #(prop) or a 'literal', found \(describe(at: index))", at: index)
    }

    // MARK: - Calls

    /// `$(`, `#(`, `.(` or `%(` at `position`.
    func isCallStart(_ position: Int) -> Bool {
        position + 1 < content.count && ExpressionSyntax.isOpener(content[position]) && content[position + 1] == UInt8(ascii: "(")
    }

    /// One call from its opener; `isNumber` for a `#(prop)` outside braces.
    mutating func call(inBraces: Bool) throws(TemplateError) -> (reference: PropertyReference, isNumber: Bool) {
        let start = index
        let opener = content[index]
        let form = Character(Unicode.Scalar(opener))
        index += 2
        skipSpaces()
        let nameStart = index
        while index < content.count, ExpressionSyntax.isNameByte(content[index]) { index += 1 }
        guard index < content.count else { throw unclosedCall(start) }
        guard index > nameStart else {
            if content[index] == UInt8(ascii: ")") {
                throw failure(.invalidPropertyName, "'\(form)()' names no property", at: index)
            }
            throw failure(
                .invalidPropertyName, "a property name holds ASCII letters, digits, '_', '-' and '.'; found \(describe(at: index))",
                at: index)
        }
        guard index - nameStart <= ExpressionSyntax.maxNameBytes else {
            throw failure(.invalidPropertyName, "a property name is at most \(ExpressionSyntax.maxNameBytes) bytes long", at: nameStart)
        }
        let name = String(decoding: content[nameStart..<index], as: UTF8.self)
        let nameEnd = index
        skipSpaces()
        var length: Int?
        if index < content.count, content[index] == UInt8(ascii: ",") {
            index += 1
            skipSpaces()
            length = try lengthArgument(form)
            skipSpaces()
        }
        guard index < content.count else { throw unclosedCall(start) }
        guard content[index] == UInt8(ascii: ")") else {
            // What ends a term or a value: the call was never closed.
            if [UInt8(ascii: "}"), UInt8(ascii: "{"), UInt8(ascii: "+"), UInt8(ascii: "'"), UInt8(ascii: "\"")].contains(content[index]) {
                throw unclosedCall(start)
            }
            if length == nil {
                throw failure(
                    .invalidPropertyName, "a property name holds ASCII letters, digits, '_', '-' and '.'; found \(describe(at: nameEnd))",
                    at: nameEnd)
            }
            throw failure(.invalidLength, "expected ')' after the length, found \(describe(at: index))", at: index)
        }
        index += 1
        let reference: (PropertyReference.Function, Bool)
        switch (opener, length) {
        case (UInt8(ascii: "$"), nil): reference = (.text, false)
        case (UInt8(ascii: "$"), let n?): reference = (.clip(n), false)
        case (UInt8(ascii: "."), let n?):
            guard n >= 3 else {
                throw failure(.invalidLength, "'.(\(name), \(n))' leaves no room for the '...': the length must be at least 3", at: start)
            }
            reference = (.ellipsis(n), false)
        case (UInt8(ascii: "."), nil):
            throw failure(.invalidLength, "'.(\(name))' needs a length: .(\(name), n)", at: start)
        case (UInt8(ascii: "#"), nil): reference = (.text, !inBraces)
        case (_, nil): reference = (.uriEncoded, false)
        case (_, .some):
            throw failure(.invalidLength, "'\(form)(\(name))' takes no length", at: start)
        }
        return (PropertyReference(name: name, key: ExpressionSyntax.fold(name), function: reference.0, pointer: pointer), reference.1)
    }

    /// The `n` of `$(prop, n)` and `.(prop, n)`: 1 to ``Template/Configuration/maxClipLength``.
    private mutating func lengthArgument(_ form: Character) throws(TemplateError) -> Int {
        let start = index
        var value = 0
        while index < content.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(content[index]) {
            value = min(value * 10 + Int(content[index] - UInt8(ascii: "0")), Int(Int32.max))
            index += 1
        }
        guard index > start else {
            throw failure(
                .invalidLength, "expected a length (a whole number of characters) after ',', found \(describe(at: index))", at: index)
        }
        guard (1...configuration.maxClipLength).contains(value) else {
            throw failure(.invalidLength, "the length must be 1 to \(configuration.maxClipLength)", at: start)
        }
        return value
    }

    func unclosedCall(_ start: Int) -> TemplateError {
        failure(.unbalancedParentheses, "'\(Character(Unicode.Scalar(content[start])))(' is never closed with ')'", at: start)
    }

    // MARK: - Bytes

    private mutating func skipSpaces() {
        while index < content.count, ExpressionSyntax.isSpace(content[index]) { index += 1 }
    }

    private func neverClosed() -> TemplateError {
        failure(.unbalancedBraces, "the expression's '{' is never closed with '}'", at: 0)
    }

    func describe(at position: Int) -> String {
        guard position < content.count else { return "the end of the value" }
        let byte = content[position]
        if (0x21...0x7E).contains(byte) { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte == 0x20 { return "a space" }
        var end = position + 1
        while end < content.count, content[end] & 0xC0 == 0x80 { end += 1 }
        return "'\(String(decoding: content[position..<end], as: UTF8.self))'"
    }

    func failure(_ code: TemplateError.Code, _ message: String, at position: Int) -> TemplateError {
        TemplateError(code, message, pointer: pointer, location: SourceLocation(offset: string.offset(position), in: body))
    }
}
