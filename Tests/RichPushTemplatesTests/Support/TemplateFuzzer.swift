/// Generates template bodies for the fuzz test: JSON objects whose string values are plain
/// text, calls and concatenations, most of them valid, then bent by a few random edits with the
/// characters the grammar cares about, so both sides of every rule are reached.
struct TemplateFuzzer {
    var random: SeededGenerator

    /// Property names the calls use, in mixed case to exercise folding.
    static let names = ["title", "Body", "n", "x", "user_name", "rich.id", "News-FR"]

    private static let textPieces = [
        "Hello", " ", "world", "50%", " (today)", "{", "}", "'", "+", "$", "#", ".", "%", "(", ")", ",", "é", "😀",
        "\\\"", "\\\\", "\\n", "\\u00e9", "\\u0024", "\\ud83d\\ude00", "~/", "-",
    ]
    private static let editCharacters: [String] = [
        "$", "#", ".", "%", "(", ")", "{", "}", "'", "\"", "+", ",", "\\", " ", ":", "[", "]", "0", "7", "a", "Z", "_", "é", "‘", "\n",
        "\u{1}",
    ]

    mutating func body() -> String {
        var text = object(depth: 0)
        if random.chance(0.5) {
            for _ in 0..<Int.random(in: 1...3, using: &random) { text = edit(text) }
        }
        return text
    }

    private mutating func object(depth: Int) -> String {
        let count = Int.random(in: depth == 0 ? 1...5 : 0...4, using: &random)
        var members: [String] = []
        var used: Set<String> = []
        for index in 0..<count {
            var key =
                random.chance(0.03) ? "k$(x)" : random.pick(["aps", "alert", "title", "body", "badge", "data", "loc-args", "a/b", "c~d"])
            if !used.insert(key).inserted { key += String(index) }
            members.append("\"\(key)\": \(value(depth: depth + 1))")
        }
        return "{" + members.joined(separator: random.pick([",", ", ", ",\n  "])) + "}"
    }

    private mutating func value(depth: Int) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0 where depth < 4: return object(depth: depth)
        case 1 where depth < 4:
            let items = (0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth: depth + 1) }
            return "[" + items.joined(separator: ", ") + "]"
        case 2: return random.pick(["0", "-1.5", "40", "2e3", "true", "false", "null"])
        case 3, 4: return "\"" + plainText() + "\""
        case 5, 6: return "\"" + call(inBraces: false) + "\""
        default: return "\"" + concatenation() + "\""
        }
    }

    private mutating func plainText() -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in random.pick(Self.textPieces) }.joined()
    }

    private mutating func call(inBraces: Bool) -> String {
        var name = random.pick(Self.names)
        if random.chance(0.3) { name = name.uppercased() }
        let space = random.chance(0.2) ? " " : ""
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return "$(\(space)\(name)\(space))"
        case 1: return "$(\(name), \(Int.random(in: 1...12, using: &random)))"
        case 2: return ".(\(name),\(space)\(Int.random(in: 3...12, using: &random)))"
        case 3: return "%(\(name))"
        case 4: return "#(\(name))"
        default: return "$(\(name))"
        }
    }

    private mutating func concatenation() -> String {
        let terms = (0..<Int.random(in: 1...5, using: &random)).map { _ in
            random.chance(0.6) ? call(inBraces: true) : literal()
        }
        return "{" + terms.joined(separator: random.pick([" + ", "+", "  +  "])) + "}"
    }

    private mutating func literal() -> String {
        let text = (0..<Int.random(in: 0...3, using: &random)).map { _ in
            random.pick(["Hi", " ", "-", ", ", "é", "50%", "(x)", "{", "}", "+", "\\\\"])
        }.joined()
        return random.chance(0.8) ? "'\(text)'" : "\\\"\(text)\\\""
    }

    /// One random insertion, deletion or replacement, on whole characters so the body stays
    /// valid Unicode (a String cannot hold anything else).
    private mutating func edit(_ text: String) -> String {
        var characters = Array(text)
        let position = Int.random(in: 0...characters.count, using: &random)
        let insert = Character(random.pick(Self.editCharacters))
        switch Int.random(in: 0..<3, using: &random) {
        case 0: characters.insert(insert, at: position)
        case 1 where position < characters.count: characters.remove(at: position)
        default:
            if position < characters.count { characters[position] = insert } else { characters.append(insert) }
        }
        return String(characters)
    }
}
