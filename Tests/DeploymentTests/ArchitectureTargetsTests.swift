import Foundation
import Testing

/// docs/architecture.md's table of targets names every target of the code, and only those: each
/// directory under Sources/ and under Tests/ (SwiftPM's target of that name, declared in
/// Package.swift) is named in the first cell of a row, as `Name` or `Tests/Name`.
@Suite("The targets in docs/architecture.md")
struct ArchitectureTargetsTests {
    static func documentedTargets() throws -> [String] {
        let text = try String(contentsOf: DocsCommandTests.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "## Targets"), "docs/architecture.md has no Targets section")
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return lines[start..<end].flatMap { line -> [String] in
            guard line.hasPrefix("| `") else { return [] }
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            // The names between backticks: every other piece of the cell split at them.
            return cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().compactMap {
                $0.offset % 2 == 1 ? String($0.element) : nil
            }
        }
    }

    static func directories(in folder: String) throws -> [String] {
        let url = DocsCommandTests.root.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }
    }

    @Test func everyTargetHasItsRowAndEveryRowItsTarget() throws {
        let manifest = try String(contentsOf: DocsCommandTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let sources = try Self.directories(in: "Sources"), tests = try Self.directories(in: "Tests")
        for directory in sources + tests {
            #expect(manifest.contains("name: \"\(directory)\""), "\(directory) is no target of Package.swift")
        }
        let directories = sources + tests.map { "Tests/\($0)" }
        let documented = try Self.documentedTargets()
        #expect(documented.count == Set(documented).count, "a target has two rows: \(documented)")
        #expect(
            Set(documented) == Set(directories),
            "missing rows: \(Set(directories).subtracting(documented).sorted()); rows of no target: \(Set(documented).subtracting(directories).sorted())"
        )
    }
}
