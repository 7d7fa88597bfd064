/// Why a tag expression or tag was refused.
package struct TagExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

extension TagExpression {
    /// The most distinct tags one expression may name (Notification Hubs allows 20 in an `||` chain).
    package static let maxTags = 20
    /// The longest expression accepted, in bytes: 20 tags of 120 bytes with their operators fit.
    package static let maxBytes = 4096
    /// The most operators (`&&`, `||`, `!`) one expression may hold. With `maxDepth` it bounds
    /// the tree, so the recursive walks (`matches`, `tags`, `description`) cannot run deep.
    package static let maxOperators = 64
    /// The deepest nesting of parentheses and `!` accepted.
    package static let maxDepth = 16

    /// Parses an expression; errors say where and what was expected. Every bound is checked
    /// before the structure is built: the input's bytes first, then tokens, operators and depth.
    package init(parsing text: String) throws(TagExpressionError) {
        guard text.utf8.count <= Self.maxBytes else {
            throw TagExpressionError(message: "the tag expression is \(text.utf8.count) bytes; at most \(Self.maxBytes) are allowed")
        }
        if text.utf8.contains(UInt8(ascii: "*")) {
            guard text.utf8.filter({ $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }).elementsEqual(Self.everyone.utf8) else {
                throw TagExpressionError(message: "'*' (every device) stands alone; it does not combine with tags")
            }
            self = .all
            return
        }
        let tokens = try Self.tokenize(text)
        let operators = tokens.count { $0 == .and || $0 == .or || $0 == .not }
        guard operators <= Self.maxOperators else {
            throw TagExpressionError(message: "the tag expression holds \(operators) operators; at most \(Self.maxOperators) are allowed")
        }
        var parser = Parser(tokens: tokens)
        let expression = try parser.parseOr()
        if let extra = parser.peek {
            throw TagExpressionError(message: "unexpected '\(extra)' after a complete expression")
        }
        let tags = expression.tags
        guard tags.count <= Self.maxTags else {
            throw TagExpressionError(message: "tag expression names \(tags.count) tags; at most \(Self.maxTags) are allowed")
        }
        self = expression
    }

    /// Checks one tag: 1 to 120 bytes of ASCII letters, digits and `_ @ # . : -`.
    package static func validate(tag: String) throws(TagExpressionError) {
        guard (1...120).contains(tag.utf8.count) else {
            throw TagExpressionError(message: "tag '\(tag.prefix(40))' must be 1 to 120 characters long")
        }
        guard tag.unicodeScalars.allSatisfy(isTagCharacter) else {
            throw TagExpressionError(message: "tag '\(tag.prefix(40))' may only hold letters, digits and _ @ # . : -")
        }
    }

    private static func isTagCharacter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)))
            || "_@#.:-".unicodeScalars.contains(scalar)
    }

    private enum Token: Equatable, CustomStringConvertible {
        case tag(String), and, or, not, open, close
        var description: String {
            switch self {
            case .tag(let tag): tag
            case .and: "&&"
            case .or: "||"
            case .not: "!"
            case .open: "("
            case .close: ")"
            }
        }
    }

    private static func tokenize(_ text: String) throws(TagExpressionError) -> [Token] {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case " ", "\t": index += 1
            case "(": tokens.append(.open); index += 1
            case ")": tokens.append(.close); index += 1
            case "!": tokens.append(.not); index += 1
            case "&", "|":
                guard index + 1 < scalars.count, scalars[index + 1] == scalar else {
                    throw TagExpressionError(message: "'\(scalar)' at position \(index + 1) must be doubled ('\(scalar)\(scalar)')")
                }
                tokens.append(scalar == "&" ? .and : .or)
                index += 2
            default:
                var tag = ""
                while index < scalars.count, isTagCharacter(scalars[index]) {
                    tag.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard !tag.isEmpty else {
                    throw TagExpressionError(message: "unexpected character '\(scalar)' at position \(index + 1)")
                }
                try validate(tag: tag)
                tokens.append(.tag(tag))
            }
        }
        guard !tokens.isEmpty else { throw TagExpressionError(message: "the tag expression is empty") }
        return tokens
    }

    /// Recursive descent with an explicit depth counter: every `(` and `!` counts, so the
    /// recursion is at most `maxDepth` levels deep whatever the input.
    private struct Parser {
        let tokens: [Token]
        var position = 0
        var depth = 0

        init(tokens: [Token]) { self.tokens = tokens }

        var peek: Token? { position < tokens.count ? tokens[position] : nil }

        mutating func parseOr() throws(TagExpressionError) -> TagExpression {
            var left = try parseAnd()
            while peek == .or {
                position += 1
                left = .or(left, try parseAnd())
            }
            return left
        }

        mutating func parseAnd() throws(TagExpressionError) -> TagExpression {
            var left = try parseUnary()
            while peek == .and {
                position += 1
                left = .and(left, try parseUnary())
            }
            return left
        }

        mutating func parseUnary() throws(TagExpressionError) -> TagExpression {
            guard let token = peek else { throw TagExpressionError(message: "the expression ends where a tag was expected") }
            position += 1
            switch token {
            case .tag(let tag):
                return .tag(tag)
            case .not:
                try descend()
                defer { depth -= 1 }
                return .not(try parseUnary())
            case .open:
                try descend()
                defer { depth -= 1 }
                let inner = try parseOr()
                guard peek == .close else { throw TagExpressionError(message: "missing ')'") }
                position += 1
                return inner
            default:
                throw TagExpressionError(message: "unexpected '\(token)' where a tag was expected")
            }
        }

        private mutating func descend() throws(TagExpressionError) {
            depth += 1
            guard depth <= TagExpression.maxDepth else {
                throw TagExpressionError(message: "parentheses and '!' nest deeper than \(TagExpression.maxDepth)")
            }
        }
    }
}
