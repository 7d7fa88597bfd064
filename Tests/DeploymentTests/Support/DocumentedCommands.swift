import Foundation

/// The `richpush …` command lines a Markdown document names: in fenced code blocks (a line
/// ending in `\` goes on on the next) and in inline code (which may wrap onto the next line).
///
/// Only a `richpush` in command position counts: first on its line or after `|`, `&&`, `;`, `&`,
/// `(` or `$(`, behind nothing but `NAME=value` assignments and `sudo`/`env`/`exec`/`nohup`/`time`.
/// So `redis-cli -p 6399 shutdown`, `curl -F …` or `ACL SETUSER richpush on …` are not read as
/// ours, and neither are `scripts/loadtest.sh --rate 2000` or its `--api-option`.
struct DocumentedCommand: Equatable, CustomStringConvertible {
    /// 1-based line of the document where the command starts.
    let line: Int
    /// The words after `richpush`: subcommands, flags and their values.
    let words: [String]

    var description: String { (["richpush"] + words).joined(separator: " ") }

    static func commands(inMarkdown text: String) -> [DocumentedCommand] {
        var found: [DocumentedCommand] = []
        var prose: [(line: Int, text: String)] = []
        var fence: String?
        var pending: (line: Int, text: String)?

        func flushProse() {
            found += commands(inProse: prose)
            prose = []
        }

        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed.hasPrefix(open) {
                    fence = nil
                    if let last = pending { found += commands(inShellLine: last.text, line: last.line) }
                    pending = nil
                    continue
                }
                let start = pending?.line ?? number
                let joined = (pending?.text ?? "") + line
                if joined.hasSuffix("\\") {
                    pending = (start, String(joined.dropLast()) + " ")
                } else {
                    pending = nil
                    found += commands(inShellLine: joined, line: start)
                }
            } else if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                flushProse()
                fence = String(trimmed.prefix(while: { $0 == trimmed.first }))
            } else {
                prose.append((number, line))
            }
        }
        if let last = pending { found += commands(inShellLine: last.text, line: last.line) }
        flushProse()
        return found
    }

    /// The commands in the inline code spans of prose lines (CommonMark: a span opens with a run
    /// of backticks and closes with a run of the same length, across line breaks).
    static func commands(inProse lines: [(line: Int, text: String)]) -> [DocumentedCommand] {
        var found: [DocumentedCommand] = []
        let characters = Array(lines.map(\.text).joined(separator: "\n"))
        var lineOfCharacter: [Int] = []
        for entry in lines { lineOfCharacter += Array(repeating: entry.line, count: entry.text.count + 1) }
        var index = 0
        while index < characters.count {
            guard characters[index] == "`" else { index += 1; continue }
            let open = index
            while index < characters.count, characters[index] == "`" { index += 1 }
            let run = index - open
            var close = index
            var closed: Int?
            while close < characters.count {
                guard characters[close] == "`" else { close += 1; continue }
                let start = close
                while close < characters.count, characters[close] == "`" { close += 1 }
                if close - start == run { closed = start; break }
            }
            guard let end = closed else { continue }
            let span = String(characters[index..<end]).replacingOccurrences(of: "\n", with: " ")
            found += commands(inShellLine: span, line: lineOfCharacter[open])
            index = end + run
        }
        return found
    }

    /// The commands on one logical shell line; its `# comment` is read as prose.
    static func commands(inShellLine text: String, line: Int) -> [DocumentedCommand] {
        var code = text
        var found: [DocumentedCommand] = []
        if let comment = commentStart(text) {
            code = String(text[..<comment])
            found += commands(inProse: [(line, String(text[comment...]))])
        }
        let separators = ["$(", "&&", "||", "|", ";", "&", "(", ")", "`"]
        var segments = [code]
        for separator in separators {
            segments = segments.flatMap { $0.components(separatedBy: separator) }
        }
        for segment in segments {
            var words = segment.split(whereSeparator: \.isWhitespace).map(String.init)[...]
            while let first = words.first, isAssignment(first) || wrappers.contains(first) { words = words.dropFirst() }
            guard let command = words.first, command == "richpush" || command.hasSuffix("/richpush") else { continue }
            found.append(DocumentedCommand(line: line, words: Array(words.dropFirst())))
        }
        return found
    }

    /// The `--flags` among the words after the subcommands: `--from=-15m` is `--from`, and
    /// `[--address A]` is `--address`; nothing after a bare `--`.
    static func flags(in words: some Collection<String>) -> [String] {
        var flags: [String] = []
        for word in words {
            if word == "--" { break }
            let bare = word.hasPrefix("[") ? word.dropFirst() : word[...]
            guard bare.hasPrefix("--") else { continue }
            let name = bare.prefix { $0.isLetter || $0.isNumber || $0 == "-" }
            if name.count > 2 { flags.append(String(name)) }
        }
        return flags
    }

    private static let wrappers: Set<String> = ["$", "sudo", "env", "exec", "nohup", "time"]

    private static func isAssignment(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return false }
        return word[..<equals].allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// Where a shell comment starts: a `#` first on the line or after a space, outside quotes.
    private static func commentStart(_ text: String) -> String.Index? {
        var quote: Character?
        var previous: Character = " "
        for index in text.indices {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#", previous.isWhitespace {
                return index
            }
            previous = character
        }
        return nil
    }
}
