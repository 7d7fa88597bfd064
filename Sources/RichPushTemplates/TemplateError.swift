/// Why a template body was refused when it was compiled, and where: the JSON pointer (RFC 6901)
/// of the string value (or member) at fault and the line and column in the body.
///
/// Registration answers it as a 400, so a sender learns at once, not per push, that a template
/// would deliver `$(message)` verbatim or break the platform's JSON.
package struct TemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of mistake; stable strings for API responses and tests.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The body is longer than ``Template/Configuration/maxBodyBytes``.
        package static let bodyTooLarge = Code("body_too_large")
        /// The body is not a JSON object, or does not render to valid JSON.
        package static let invalidJSON = Code("invalid_json")
        /// Arrays and objects nest deeper than ``Template/Configuration/maxDepth``.
        package static let tooDeep = Code("too_deep")
        /// More property references, or terms in one expression, than the configuration allows.
        package static let tooManyExpressions = Code("too_many_expressions")
        /// An expression where JSON expects a value, not inside a string: `"badge": #(n)`.
        package static let expressionOutsideString = Code("expression_outside_string")
        /// An expression in a member name: Notification Hubs expands values only.
        package static let expressionInKey = Code("expression_in_key")
        /// An expression mixed with text outside `{}`: `"Hi $(name)"` (azure-notificationhubs #39).
        package static let expressionMixedWithText = Code("expression_mixed_with_text")
        /// A `{` never closed, or a `}` never opened.
        package static let unbalancedBraces = Code("unbalanced_braces")
        /// A `(` never closed, or a `)` never opened.
        package static let unbalancedParentheses = Code("unbalanced_parentheses")
        /// A call the language does not have: `upper(title)`, `&(title)`.
        package static let unknownFunction = Code("unknown_function")
        /// Anything else the expression grammar does not allow: `{}`, a missing `+`, a literal
        /// never closed, typographic quotes.
        package static let invalidExpression = Code("invalid_expression")
        /// A property name missing, too long, or with a character outside `A-Z a-z 0-9 _ - .`.
        package static let invalidPropertyName = Code("invalid_property_name")
        /// The `n` of `$(prop, n)` or `.(prop, n)` missing, not a number, or out of range.
        package static let invalidLength = Code("invalid_length")
        /// A literal holding `$(`, `#(`, `.(` or `%(`: quotes do not expand expressions.
        package static let expressionInLiteral = Code("expression_in_literal")
    }

    package let code: Code
    package let message: String
    /// The RFC 6901 pointer of the string value (or member) at fault: `/aps/alert`; `""` is
    /// the whole body.
    package let pointer: String
    /// Where in the body, 1-based.
    package let location: SourceLocation

    package init(_ code: Code, _ message: String, pointer: String, location: SourceLocation) {
        self.code = code
        self.message = message
        self.pointer = pointer
        self.location = location
    }

    package var description: String {
        "\(message) (at \(pointer.isEmpty ? "the body" : pointer), line \(location.line), column \(location.column))"
    }
}
