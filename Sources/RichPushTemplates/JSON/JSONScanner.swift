/// Walks a JSON text once, strictly as RFC 8259 has it, and stops at each member name and
/// string value: the compiler turns string values into expressions and checks names, and the
/// same walk checks a rendered body. Iterative, with the nesting bounded, so hostile input
/// cannot exhaust the stack; every failure is a ``TemplateError`` naming a pointer and a column.
///
/// Stricter than the grammar in two places a push payload never needs: a member name may not
/// repeat in one object (which value a platform keeps is anyone's guess), and a `\u` escape may
/// not be half a surrogate pair (not Unicode; Foundation refuses it).
struct JSONScanner {
    enum Event {
        case memberName(JSONString)
        case stringValue(JSONString)
    }

    private enum State { case value, firstMember, member, firstElement, afterValue }

    private struct Container {
        let isObject: Bool
        let start: Int
        var names: Set<String> = []
    }

    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0
    private var state = State.value
    private var containers: [Container] = []
    /// Where the scanner is: the member or element whose value comes next or was just read.
    private(set) var pointer = JSONPointer()

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// The next member name or string value, or nil at the end of a valid body.
    mutating func next() throws(TemplateError) -> Event? {
        while true {
            skipWhitespace()
            switch state {
            case .value:
                if let event = try value() { return event }
            case .firstElement:
                if peek == UInt8(ascii: "]") {
                    index += 1
                    containers.removeLast()
                    state = .afterValue
                } else {
                    pointer.append(.index(0))
                    state = .value
                }
            case .firstMember:
                if peek == UInt8(ascii: "}") {
                    index += 1
                    containers.removeLast()
                    state = .afterValue
                } else if let peek, peek == UInt8(ascii: "'") || peek == UInt8(ascii: "+") || isExpressionStart(index) {
                    let start = containers[containers.count - 1].start
                    throw failure(
                        .expressionOutsideString,
                        "an expression in braces must be a JSON string value: write \"{…}\" with the double quotes", at: start)
                } else {
                    state = .member
                }
            case .member:
                return try memberName()
            case .afterValue:
                if let end = try afterValue() { return end }
            }
        }
    }

    // MARK: - Values

    private mutating func value() throws(TemplateError) -> Event? {
        guard let byte = peek else { throw failure(.invalidJSON, "the body ends where a value is expected", at: index) }
        if containers.isEmpty, byte != UInt8(ascii: "{") {
            if isExpressionStart(index) {
                throw failure(.expressionOutsideString, "an expression must be a JSON string value inside a JSON object", at: index)
            }
            throw failure(.invalidJSON, "a template body is a JSON object: it must start with '{'", at: index)
        }
        switch byte {
        case UInt8(ascii: "\""):
            let string = try readString()
            state = .afterValue
            return .stringValue(string)
        case UInt8(ascii: "{"):
            try open(isObject: true)
            state = .firstMember
        case UInt8(ascii: "["):
            try open(isObject: false)
            state = .firstElement
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case _ where isExpressionStart(index):
            throw failure(
                .expressionOutsideString,
                "an expression must be a JSON string value: write \"\(expressionPreview(index))\" with the double quotes (a \"#(prop)\" value that is a number is written without them)",
                at: index)
        case UInt8(ascii: "'"):
            throw failure(.invalidJSON, "JSON strings take double quotes, not single quotes", at: index)
        default:
            throw failure(.invalidJSON, "unexpected \(describe(byte)) where a value is expected", at: index)
        }
        return nil
    }

    private mutating func open(isObject: Bool) throws(TemplateError) {
        guard containers.count < maxDepth else {
            throw failure(.tooDeep, "arrays and objects nest more than \(maxDepth) deep", at: index)
        }
        containers.append(Container(isObject: isObject, start: index))
        index += 1
    }

    private mutating func memberName() throws(TemplateError) -> Event {
        guard peek == UInt8(ascii: "\"") else {
            let found = peek.map(describe) ?? "the end of the body"
            throw failure(.invalidJSON, "expected a member name in double quotes, found \(found)", at: index)
        }
        let start = index
        let name = try readString()
        let key = name.text
        guard containers[containers.count - 1].names.insert(key).inserted else {
            throw failure(.invalidJSON, "the member name \"\(key)\" appears twice in one object", at: start)
        }
        pointer.append(.member(key))
        skipWhitespace()
        guard peek == UInt8(ascii: ":") else {
            throw failure(.invalidJSON, "expected ':' after the member name \"\(key)\"", at: index)
        }
        index += 1
        state = .value
        return .memberName(name)
    }

    /// After a value: a comma, the end of its container, or the end of the body. Returns
    /// `.some(nil)` at the end of the body.
    private mutating func afterValue() throws(TemplateError) -> Event?? {
        guard let top = containers.last else {
            guard index == bytes.count else {
                throw failure(.invalidJSON, "unexpected \(describe(bytes[index])) after the body's closing '}'", at: index)
            }
            return .some(nil)
        }
        let closer = top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        guard let byte = peek else {
            throw failure(
                .invalidJSON,
                "the body ends inside an \(top.isObject ? "object" : "array"): a '\(Character(Unicode.Scalar(closer)))' is missing",
                at: index)
        }
        if byte == UInt8(ascii: ",") {
            index += 1
            if top.isObject {
                pointer.removeLast()
                state = .member
            } else {
                pointer.advanceIndex()
                state = .value
            }
        } else if byte == closer {
            index += 1
            pointer.removeLast()
            containers.removeLast()
        } else {
            throw failure(.invalidJSON, "expected ',' or '\(Character(Unicode.Scalar(closer)))', found \(describe(byte))", at: index)
        }
        return nil
    }

    private mutating func literal(_ word: StaticString) throws(TemplateError) {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        guard index + count <= bytes.count, (0..<count).allSatisfy({ bytes[index + $0] == start[$0] }) else {
            throw failure(.invalidJSON, "unexpected \(describe(bytes[index])) where a value is expected", at: index)
        }
        index += count
        state = .afterValue
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(TemplateError) {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, isDigit(first) else {
            throw failure(.invalidJSON, "a number needs a digit after '-'", at: start)
        }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek, isDigit(next) {
            throw failure(.invalidJSON, "a number may not start with 0", at: start)
        }
        skipDigits()
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek, isDigit(digit) else { throw failure(.invalidJSON, "a number needs a digit after '.'", at: index) }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek, isDigit(digit) else { throw failure(.invalidJSON, "a number needs a digit in its exponent", at: index) }
            skipDigits()
        }
        state = .afterValue
    }

    // MARK: - Bytes

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func skipDigits() {
        while let byte = peek, isDigit(byte) { index += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `$(`, `#(`, `.(` or `%(` at `offset`.
    private func isExpressionStart(_ offset: Int) -> Bool {
        offset + 1 < bytes.count && ExpressionSyntax.isOpener(bytes[offset]) && bytes[offset + 1] == UInt8(ascii: "(")
    }

    /// The expression at `offset` up to its `)`, for a message that says how to write it.
    private func expressionPreview(_ offset: Int) -> String {
        var end = offset
        while end < bytes.count, end - offset < 64, bytes[end] != UInt8(ascii: ")") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ")") else { return "\(Character(Unicode.Scalar(bytes[offset])))(…)" }
        return String(decoding: bytes[offset...end], as: UTF8.self)
    }

    func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x20...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
        default: "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    func failure(_ code: TemplateError.Code, _ message: String, at offset: Int) -> TemplateError {
        TemplateError(code, message, pointer: pointer.description, location: SourceLocation(offset: offset, in: bytes))
    }
}
