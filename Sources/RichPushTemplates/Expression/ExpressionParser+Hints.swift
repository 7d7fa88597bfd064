/// The mistakes made outside `{…}`, refused with the value written the way that works: the
/// azure-notificationhubs #39 trap (`"Some other text. $(message)"`), concatenation without
/// braces, a stray `)` or `}`.
extension ExpressionParser {
    /// A call is followed by more than the end of the value.
    mutating func refuseTrailingText() throws(TemplateError) {
        let rest = content[index...]
        let firstSolid = rest.firstIndex { !ExpressionSyntax.isSpace($0) } ?? index
        if content[firstSolid] == UInt8(ascii: ")") {
            throw failure(.unbalancedParentheses, "')' without a matching '('", at: firstSolid)
        }
        if content[firstSolid] == UInt8(ascii: "}"), !content.contains(UInt8(ascii: "{")) {
            throw failure(.unbalancedBraces, "'}' without a matching '{'", at: firstSolid)
        }
        if content[firstSolid] == UInt8(ascii: "+") {
            let text = String(decoding: content, as: UTF8.self)
            throw failure(
                .expressionMixedWithText, "concatenation must be wrapped in braces: write \(Self.jsonString("{" + text + "}"))", at: 0)
        }
        throw mixedWithText(at: 0)
    }

    /// The azure-notificationhubs #39 trap, with the value written the way that works.
    func mixedWithText(at opener: Int) -> TemplateError {
        var probe = self
        probe.index = opener
        let call =
            (try? probe.call(inBraces: true)) != nil
            ? String(decoding: content[opener..<probe.index], as: UTF8.self)
            : String(decoding: content[opener...].prefix(2), as: UTF8.self) + "…"
        var message = "'\(call)' is mixed with text outside {}: Notification Hubs would deliver it verbatim"
        if let fixed = concatenationHint() {
            message += "; write \(Self.jsonString(fixed))"
        } else {
            message += "; join text and calls in one {…} with '+', text in quotes: {'Hi ' + $(name)}"
        }
        return failure(.expressionMixedWithText, message, at: opener)
    }

    /// The value as a concatenation, when its text parts can be quoted and its calls parse.
    private func concatenationHint() -> String? {
        var parts: [String] = []
        var text: [UInt8] = []
        var probe = self
        probe.index = 0
        func flush() -> Bool {
            defer { text = [] }
            guard !text.isEmpty else { return true }
            guard !text.contains(UInt8(ascii: "{")), !text.contains(UInt8(ascii: "}")),
                let quoted = Self.quote(String(decoding: text, as: UTF8.self))
            else { return false }
            parts.append(quoted)
            return true
        }
        while probe.index < content.count {
            if probe.isCallStart(probe.index) {
                guard flush() else { return nil }
                let start = probe.index
                guard (try? probe.call(inBraces: true)) != nil else { return nil }
                parts.append(String(decoding: content[start..<probe.index], as: UTF8.self))
            } else {
                text.append(content[probe.index])
                probe.index += 1
            }
        }
        guard flush(), parts.count > 1 else { return nil }
        return "{" + parts.joined(separator: " + ") + "}"
    }

    /// `text` as a literal: single quotes unless it holds one, then double quotes.
    static func quote(_ text: String) -> String? {
        if !text.contains("'") { return "'\(text)'" }
        if !text.contains("\"") { return "\"\(text)\"" }
        return nil
    }

    /// `text` as it goes in the template: a JSON string with its quotes.
    static func jsonString(_ text: String) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        JSONEscaping.append(text, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }
}
