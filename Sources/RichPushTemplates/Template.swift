/// A push body template in Azure Notification Hubs' expression language, compiled once (when an
/// installation registers it) and rendered per device without being parsed again.
///
/// The body is a JSON object (an APNs, FCM or Web Push payload) whose string values may be
/// expressions: `"$(title)"`, `".(body, 120)"`, `"#(badge)"`, `"{'Hi, ' + $(name)}"`. Compiling
/// refuses, with a pointer and a column, every body that would deliver an expression verbatim
/// or break the payload's JSON, so a push never leaves with `$(`, `#(`, `.(` or `%(` from a
/// template in it. The compiled form is a ``Program``: rendering copies the body's bytes between
/// expression values and writes each value's terms, JSON-escaped, into one buffer.
package struct Template: Sendable {
    /// The body as registered.
    package let body: String
    /// Every property the body refers to, folded to lower case, sorted, each once.
    package let propertyNames: [String]
    /// How many calls (`$(…)`, `.(…)`, `%(…)`, `#(…)`) the body holds.
    package let expressionCount: Int
    let program: Program

    /// Compiles `body`, checking every rule of the language and that the body renders to valid
    /// JSON (with placeholder values, so whatever the properties are).
    package init(_ body: String, configuration: Configuration = Configuration()) throws(TemplateError) {
        let bytes = Array(body.utf8)
        guard bytes.count <= configuration.maxBodyBytes else {
            throw TemplateError(
                .bodyTooLarge, "the template body is \(bytes.count) bytes; at most \(configuration.maxBodyBytes) are allowed",
                pointer: "", location: SourceLocation(line: 1, column: 1, offset: 0))
        }
        var scanner = JSONScanner(bytes: bytes, maxDepth: configuration.maxDepth)
        var program = Program(body: bytes)
        var names: Set<String> = []
        var expressionCount = 0
        var copied = 0
        while let event = try scanner.next() {
            switch event {
            case .memberName(let name):
                if let opener = ExpressionSyntax.firstOpener(in: name.content) {
                    throw TemplateError(
                        .expressionInKey, "a member name holds an expression; Notification Hubs expands string values only, never names",
                        pointer: scanner.pointer.description, location: SourceLocation(offset: name.offset(opener), in: bytes))
                }
            case .stringValue(let string):
                let pointer = scanner.pointer.description
                var parser = ExpressionParser(string, pointer: pointer, body: bytes, configuration: configuration)
                guard let expression = try parser.parse() else { continue }
                expressionCount += expression.propertyCount
                guard expressionCount <= configuration.maxExpressions else {
                    throw TemplateError(
                        .tooManyExpressions, "the body holds more than \(configuration.maxExpressions) expressions",
                        pointer: pointer, location: SourceLocation(offset: string.range.lowerBound, in: bytes))
                }
                for case .property(let reference) in expression.terms { names.insert(reference.key) }
                program.copyBody(copied..<string.range.lowerBound)
                program.append(expression, replacing: string.range)
                copied = string.range.upperBound
            }
        }
        program.copyBody(copied..<bytes.count)
        self.body = body
        self.program = program
        self.propertyNames = names.sorted()
        self.expressionCount = expressionCount
        try checkRendersValidJSON(maxDepth: configuration.maxDepth)
    }
}
