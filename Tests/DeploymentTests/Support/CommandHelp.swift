import Foundation
import RedisTestSupport

/// What the real `richpush` says of its subcommands and flags, read from each command's
/// `--help` (asked once per command) and never from the source, so a doc is checked against the
/// CLI a user runs.
actor CommandHelp {
    /// One command's help: its subcommands and every flag it takes (both names of
    /// `--webhooks/--no-webhooks`).
    struct Page {
        var subcommands: Set<String> = []
        var flags: Set<String> = []
    }

    private let executable: String
    private var pages: [[String]: Page] = [:]

    init(executable: String) {
        self.executable = executable
    }

    /// Why `richpush <words>` is not a command the CLI has, if it is not: a subcommand it does
    /// not have, or a flag its (sub)command does not take. A placeholder where a subcommand
    /// goes (`richpush …`, `richpush <subcommand>`) has nothing to check.
    func problems(_ words: [String]) async throws -> [String] {
        var path: [String] = []
        var page = try await self.page(path)
        var rest = words[...]
        while !page.subcommands.isEmpty, let next = rest.first, !next.hasPrefix("-") {
            guard next.first.map({ $0.isLowercase && $0.isLetter }) == true,
                next.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" })
            else { return [] }
            guard page.subcommands.contains(next) else {
                return ["`richpush \((path + [next]).joined(separator: " "))` is not a subcommand"]
            }
            path.append(next)
            rest = rest.dropFirst()
            page = try await self.page(path)
        }
        let command = (["richpush"] + path).joined(separator: " ")
        return DocumentedCommand.flags(in: rest).filter { !page.flags.contains($0) }.map { "`\(command)` has no \($0)" }
    }

    private func page(_ path: [String]) async throws -> Page {
        if let page = pages[path] { return page }
        let (status, output) = try await runTool(executable, path + ["--help"])
        guard status == 0 else { throw HelpError(message: "`richpush \(path.joined(separator: " ")) --help` exited \(status): \(output)") }
        let page = Self.parse(output)
        pages[path] = page
        return page
    }

    /// Reads swift-argument-parser's help: subcommands are the first word of the lines of its
    /// SUBCOMMANDS section; flags are in the name column of lines that start with two spaces
    /// and a dash (`  -h, --help`, `  --apns-url <apns-url>   APNs server…`).
    static func parse(_ help: String) -> Page {
        var page = Page()
        var section = ""
        for line in help.components(separatedBy: "\n") {
            if let first = line.first, !first.isWhitespace, line.hasSuffix(":") {
                section = line
                continue
            }
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
            let column = line.dropFirst(2).components(separatedBy: "  ")[0]
            if section == "SUBCOMMANDS:", let name = column.split(separator: " ").first,
                name.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" })
            {
                page.subcommands.insert(String(name))
            } else if column.hasPrefix("-") {
                // The names and their value placeholders, up to a description that follows after
                // one space only (`--linger-ms <linger-ms> Milliseconds the next read waits…`).
                let names = column.split(whereSeparator: { $0 == " " || $0 == "," })
                    .prefix { $0.hasPrefix("-") || $0.hasPrefix("<") || $0.hasPrefix("[") || $0 == "..." }
                page.flags.formUnion(DocumentedCommand.flags(in: names.flatMap { $0.split(separator: "/").map(String.init) }))
            }
        }
        return page
    }

    struct HelpError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
