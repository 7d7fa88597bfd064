import Foundation
import Testing

/// docs/architecture.md walks a newcomer through the life of one notification, file by file
/// (a guided reading of the main line; what runs is measured in docs/path-measured.md). The walk is only
/// useful while it is true: every stop's file exists, every function it names is declared there,
/// a numbered stop is a file not read before (a file read again is a return, marked ↩), and the
/// counts the section states are the counts of its list.
@Suite("The notification's path in docs/architecture.md")
struct ArchitecturePathTests {
    /// A numbered stop (`12. \`Target/File.swift\`: \`name\` …`) or a return (`- ↩ 7: \`name\` …`).
    struct Step {
        let line: Int
        /// The stop's number, or nil for a return.
        let number: Int?
        /// The file of a stop; the stop numbers a return goes back to.
        let file: String?
        let returnsTo: [Int]
        /// The functions named before the first sentence ends, outside parentheses.
        let names: [String]
    }

    static func section() throws -> (text: String, firstLine: Int) {
        let text = try String(contentsOf: DocsCommandTests.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "## The path of one notification"), "docs/architecture.md has no path section")
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return (lines[start..<end].joined(separator: "\n"), start + 1)
    }

    /// The section's list items, each joined with its continuation lines.
    static func steps(_ text: String, firstLine: Int) -> [Step] {
        var items: [(line: Int, text: String)] = []
        for (offset, line) in text.components(separatedBy: "\n").enumerated() {
            let isStop = line.prefix { $0.isNumber }.count > 0 && line.drop { $0.isNumber }.hasPrefix(". ")
            if isStop || line.hasPrefix("- ↩") {
                items.append((firstLine + offset, line))
            } else if line.hasPrefix("  "), !items.isEmpty, !line.trimmingCharacters(in: .whitespaces).isEmpty {
                items[items.count - 1].text += " " + line.trimmingCharacters(in: .whitespaces)
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("**") {
                continue
            } else if !items.isEmpty {
                // A paragraph after the list ends the last item.
                items.append((firstLine + offset, ""))
            }
        }
        return items.filter { !$0.text.isEmpty }.map { item in
            if item.text.hasPrefix("- ↩") {
                let head = item.text.dropFirst(3).prefix { $0 != ":" }
                let numbers = head.split { !$0.isNumber }.compactMap { Int($0) }
                return Step(
                    line: item.line, number: nil, file: nil, returnsTo: numbers,
                    names: names(in: String(item.text.drop { $0 != ":" }.dropFirst())))
            }
            let number = Int(item.text.prefix { $0.isNumber })
            let rest = item.text.drop { $0 != "`" }.dropFirst()
            let file = String(rest.prefix { $0 != "`" })
            return Step(
                line: item.line, number: number, file: file, returnsTo: [], names: names(in: String(rest.drop { $0 != ":" }.dropFirst())))
        }
    }

    /// Backticked lower-camel names (`take`, `render(_:format:collapseID:)`) up to the end of the
    /// first sentence, leaving out what is in parentheses (`(\`XREADGROUP\`)`, `(the tag scan)`).
    static func names(in text: String) -> [String] {
        var names: [String] = []
        var depth = 0, inCode = false, code = ""
        var previous: Character = " "
        for character in text {
            if inCode {
                if character == "`" {
                    inCode = false
                    if depth == 0, code.first?.isLowercase == true, code.allSatisfy({ $0.isLetter || $0.isNumber || "(_:)".contains($0) }) {
                        names.append(code)
                    }
                } else {
                    code.append(character)
                }
            } else if character == "`" {
                inCode = true
                code = ""
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                depth = max(0, depth - 1)
            } else if character == " ", previous == ".", depth == 0 {
                break
            }
            previous = character
        }
        return names
    }

    /// Whether `source` declares `name` (a Swift `func`, `let`, `var` or `case`, or a Lua
    /// `function`), with the argument labels it names, in order.
    static func declares(_ source: String, _ name: String) -> Bool {
        let base = String(name.prefix { $0 != "(" })
        let labels = name.contains("(") ? name.drop { $0 != "(" }.dropFirst().dropLast().split(separator: ":").map(String.init) : nil
        // The name may be in backticks (`default`) and take generic parameters (`run<Call, Result>`).
        let escapedBase = NSRegularExpression.escapedPattern(for: base)
        var pattern = "\\b(func|let|var|case|function) (`\(escapedBase)`|\(escapedBase)\\b)"
        if let labels {
            pattern += "(<[^>{]*>)?\\("
            for (index, label) in labels.enumerated() {
                let escaped = NSRegularExpression.escapedPattern(for: label)
                pattern += index == 0 ? (label == "_" ? "\\s*_\\s" : "\\s*\(escaped)\\b") : "[^{]{0,400}?\\b\(escaped)\\b"
            }
        }
        return source.range(of: pattern, options: .regularExpression) != nil
    }

    /// Checks a list of stops against the sources: each file exists and declares the functions
    /// named, stops are numbered in order, a file read again is marked as a return.
    static func check(_ steps: [Step], in document: String) throws -> (problems: [String], files: Int, returns: Int) {
        let sources = DocsCommandTests.root.appendingPathComponent("Sources")
        var problems: [String] = []
        var files: [Int: String] = [:]
        var read: [String] = []
        var returns = 0
        var cache: [String: String] = [:]
        for step in steps {
            var targets: [(file: String, number: Int)] = []
            if let number = step.number, let file = step.file {
                if number != files.count + 1 { problems.append("\(document):\(step.line): stop \(number) after stop \(files.count)") }
                if read.contains(file) { problems.append("\(document):\(step.line): \(file) was read before: mark it as a return (↩)") }
                files[number] = file
                read.append(file)
                targets = [(file, number)]
            } else {
                for number in step.returnsTo {
                    guard let file = files[number] else {
                        problems.append("\(document):\(step.line): ↩ \(number) is not an earlier stop")
                        continue
                    }
                    targets.append((file, number))
                }
                returns += targets.count
            }
            let contents = try targets.map { target -> String in
                if let text = cache[target.file] { return text }
                let url = sources.appendingPathComponent(target.file)
                guard FileManager.default.fileExists(atPath: url.path) else {
                    problems.append("\(document):\(step.line): Sources/\(target.file) does not exist")
                    return ""
                }
                let text = try String(contentsOf: url, encoding: .utf8)
                cache[target.file] = text
                return text
            }
            for name in step.names where !contents.contains(where: { Self.declares($0, name) }) {
                problems.append(
                    "\(document):\(step.line): \(name) is not declared in \(targets.map { "Sources/\($0.file)" }.joined(separator: " or "))"
                )
            }
        }
        return (problems, read.count, returns)
    }

    @Test func everyStopIsARealFileWithTheFunctionsItNames() throws {
        let (text, firstLine) = try Self.section()
        let steps = Self.steps(text, firstLine: firstLine)
        let sources = DocsCommandTests.root.appendingPathComponent("Sources")
        var (problems, files, returns) = try Self.check(steps, in: "docs/architecture.md")
        for step in steps where step.names.isEmpty { problems.append("docs/architecture.md:\(step.line): names no function") }
        // The files the section names outside the list (what runs before the route, the other
        // platforms' adapters) exist too.
        for path in text.components(separatedBy: "`").filter({ $0.hasSuffix(".swift") && $0.contains("/") }) {
            if !FileManager.default.fileExists(atPath: sources.appendingPathComponent(path).path) {
                problems.append("Sources/\(path) does not exist")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problem(s) in docs/architecture.md's path:\n\(problems.joined(separator: "\n"))")

        let stated = try #require(
            text.range(of: "It crosses [0-9]+ files, with [0-9]+ returns", options: .regularExpression).map { text[$0] },
            "the section says how many files and returns")
        let numbers = stated.split { !$0.isNumber }.compactMap { Int($0) }
        #expect(numbers == [files, returns], "the section says \"\(stated)\", the list has \(files) files and \(returns) returns")
        #expect(files >= 20, "found only \(files) stops: is the list still read right?")
    }

    /// docs/path-measured.md is what scripts/dev/measure-path.sh measured as the code ran: every
    /// file and function it names still exists (a rename or a move makes it stale: measure again),
    /// its counts are its list's, and docs/architecture.md quotes them.
    @Test func theMeasuredPathIsTheCodesAndTheArchitectureDocQuotesIt() throws {
        let root = DocsCommandTests.root
        let measured = try String(contentsOf: root.appendingPathComponent("docs/path-measured.md"), encoding: .utf8)
        let steps = Self.steps(measured, firstLine: 1)
        let (problems, files, returns) = try Self.check(steps, in: "docs/path-measured.md")
        #expect(
            problems.isEmpty,
            "\(problems.count) problem(s) in docs/path-measured.md (run scripts/dev/measure-path.sh --write):\n\(problems.prefix(20).joined(separator: "\n"))"
        )
        #expect(files >= 50, "found only \(files) files: is the measured list still read right?")
        let pattern = "\\*\\*[0-9]+ files, [0-9]+ stops, [0-9]+ returns\\*\\*"
        let stated = try #require(measured.range(of: pattern, options: .regularExpression).map { String(measured[$0]) })
        let numbers = stated.split { !$0.isNumber }.compactMap { Int($0) }
        #expect(
            numbers == [files, steps.count, returns],
            "docs/path-measured.md says \(stated); its list has \(files) files, \(steps.count) stops, \(returns) returns")
        let architecture = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        #expect(architecture.contains(stated), "docs/architecture.md quotes the measured path's counts, \(stated)")
    }

    /// The check can fail: a stale file, a function the file lacks, a file read twice without ↩,
    /// and a return to a stop that does not exist are each reported.
    @Test func aStaleStopIsReported() throws {
        let sample = """
            1. `RichPushAPI/Routes/NotificationRoutes.swift`: `create`. It parses (`json`), then
               `noSuchFunction` is not reached: the sentence ended.
            2. `RichPushQueue/Queue/JobQueue+Consumer.swift`: `take` and `acknowledge`.
            - ↩ 1 and 3: `fetch`, then `receipt`.
            """
        let steps = Self.steps(sample, firstLine: 1)
        #expect(steps.map(\.number) == [1, 2, nil])
        #expect(steps.map(\.names) == [["create"], ["take", "acknowledge"], ["fetch", "receipt"]])
        #expect(steps[2].returnsTo == [1, 3])
        let consumer = "package func take(for consumer: String, count: Int) {}\nfunc render(_ n: Int, format: F, collapseID: String) {}"
        #expect(Self.declares(consumer, "take"))
        #expect(!Self.declares(consumer, "acknowledge"))
        #expect(Self.declares(consumer, "take(for:count:)"))
        #expect(!Self.declares(consumer, "take(_:)"))
        #expect(Self.declares(consumer, "render(_:format:collapseID:)"))
        #expect(!Self.declares(consumer, "render(_:collapseID:format:)"))
        let generic = "static let `default` = AppID(\"default\")\nfunc run<Call, Result>(\n    _ call: Call, calls: [Call]) {}"
        #expect(Self.declares(generic, "default"))
        #expect(Self.declares(generic, "run(_:calls:)"))
        #expect(!Self.declares(generic, "run(_:into:)"))
    }
}
