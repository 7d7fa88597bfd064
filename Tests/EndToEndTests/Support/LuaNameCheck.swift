import Foundation
import Hiredis

/// What a ``LuaDeclaration``'s hand-written Lua gets wrong against its declaration: positions
/// read by hand, names it reads that nothing declares, names declared that it never reads.
/// A reader of Lua 5.1 only as far as these scripts need (names, not grammar).
enum LuaNameCheck {
    /// Problems of `declaration`, each a sentence; none when it agrees with its body.
    static func problems(of declaration: any LuaDeclaration, constants: [LuaConstant]) -> [String] {
        let fragments = stripped(declaration.fragments), body = stripped(declaration.body)
        let text = fragments + body
        var problems: [String] = []
        if text.contains("KEYS[") { problems.append("the body reads KEYS[…] by position") }
        for index in matches(#"ARGV\[([^\]]*)\]"#, in: text) where matches(#"^[A-Za-z_]\w*(?: \+ 1)?$"#, in: index).isEmpty {
            problems.append("the body reads ARGV[\(index)]: only an element of a declared list (ARGV[i], ARGV[i + 1]) may be read")
        }
        for cursor in ["_k", "_a"] where text.containsLuaWord(cursor) { problems.append("the body touches the prelude's cursor \(cursor)") }
        // Fragments come before the prelude: they see the constants and their own names only;
        // the body sees those, the fragments' functions and the declaration's names.
        let shared = Set(constants.map(\.name) + builtins)
        for name in Set(reads(in: fragments)).subtracting(shared.union(locals(in: fragments))).sorted() {
            problems.append("a shared fragment reads \(name), which nothing before it declares")
        }
        let declared = (declaration.shapes + declaration.itemShapes).flatMap(\.names)
        for name in declared where keywords.contains(name) { problems.append("the declaration names \(name), a Lua keyword") }
        let known = shared.union(declared + locals(in: body) + matches(#"local\s+function\s+(\w+)"#, in: fragments))
        for name in Set(reads(in: body)).subtracting(known).sorted() {
            problems.append("the body reads \(name), which neither the declaration nor the body declares")
        }
        for shape in declaration.shapes + declaration.itemShapes {
            let names = shape.names
            let read: Bool
            switch shape {
            case .list, .section: read = names.contains { text.containsLuaWord($0) }
            default: read = text.containsLuaWord(names[0])
            }
            if !read { problems.append("the declaration names \(names[0]), which the body never reads") }
        }
        return problems
    }

    /// Keys and arguments a declaration produces for a probe call: every key under `prefix`,
    /// every argument its value in `examples` by name or else "1", every list two "1"s, every
    /// section present; a batched script two items.
    static func probe(
        _ declaration: any LuaDeclaration, prefix: String, examples: [String: String]
    ) -> (keys: [String], arguments: [String]) {
        var keys: [String] = [], arguments: [String] = []
        func fill(_ shapes: [LuaShape]) {
            for shape in shapes {
                switch shape {
                case .key(let name): keys.append("\(prefix):\(name)")
                case .argument(let name, _): arguments.append(examples[name] ?? "1")
                case .list: arguments += ["2", "1", "1"]
                case .section(_, let parts):
                    arguments.append("1")
                    fill(parts)
                }
            }
        }
        fill(declaration.shapes)
        if declaration.isBatched { for _ in 0..<2 { fill(declaration.itemShapes) } }
        return (keys, arguments)
    }

    static let keywords: Set = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local", "nil", "not", "or",
        "repeat", "return", "then", "true", "until", "while",
    ]
    static let builtins = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local", "nil", "not", "or",
        "repeat", "return", "then", "true", "until", "while", "redis", "cjson", "cmsgpack", "bit", "string", "table", "math",
        "tonumber", "tostring", "ipairs", "pairs", "unpack", "type", "pcall", "error", "select", "next", "assert", "KEYS", "ARGV",
    ]

    /// The text without comments and string literals.
    static func stripped(_ text: String) -> String {
        var out = text
        for pattern in [#"--[^\n]*"#, #"'(\\.|[^'\\])*'"#, #""(\\.|[^"\\])*""#] {
            out = out.replacingOccurrences(of: pattern, with: "''", options: .regularExpression)
        }
        return out
    }

    /// Names the text declares: locals, functions, their parameters, loop variables.
    static func locals(in text: String) -> [String] {
        let lists =
            matches(#"local\s+function\s+(\w+)"#, in: text) + matches(#"local\s+((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)"#, in: text)
            + matches(#"function\s*\w*\s*\(([^)]*)\)"#, in: text) + matches(#"for\s+([\w\s,]+?)\s+in\b"#, in: text)
            + matches(#"for\s+(\w+)\s*="#, in: text)
        return lists.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter {
            !$0.isEmpty && $0 != "function"
        }
    }

    /// Names the text reads: identifiers not after `.` or `:` (fields, methods), nor before a
    /// single `=` after `{` or `,` (a table constructor's keys; this also skips the targets of a
    /// multiple assignment, which are read elsewhere or declared).
    static func reads(in text: String) -> [String] {
        let values = text.replacingOccurrences(of: #"([{,]\s*)[A-Za-z_]\w*\s*=(?!=)"#, with: "$1", options: .regularExpression)
        return matches(#"(?<![.:\w])([A-Za-z_]\w*)"#, in: values)
    }

    /// Whether a script's error reply is Lua's own (a runtime error in its text, a name it does
    /// not have, a nil handed to Redis), rather than a Redis command's refusal of probe values.
    static func isLuaError(_ message: String) -> Bool {
        !matches(#"user_script:\d+: "#, in: message).isEmpty || message.contains("global variable") || message.contains("arguments must be")
    }

    /// The first capture group of each match (the whole match when there is none).
    static func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: match.numberOfRanges > 1 ? 1 : 0), in: text).map { String(text[$0]) }
        }
    }
}

extension String {
    /// Whether `word` occurs as a whole identifier.
    func containsLuaWord(_ word: String) -> Bool {
        !LuaNameCheck.matches(#"(?<![\w])"# + NSRegularExpression.escapedPattern(for: word) + #"(?![\w])"#, in: self).isEmpty
    }
}
