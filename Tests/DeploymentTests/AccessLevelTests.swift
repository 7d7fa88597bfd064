import Foundation
import Testing

/// Nothing outside this package imports its library targets, so what crosses targets is
/// `package`, never `public` (issue 33): a `public` declaration that comes back is named here,
/// with the script that turns it (scripts/dev/package-access.sh). The only `public` left are the
/// imports a retroactive conformance needs, listed in scripts/dev/package-access.exceptions.
@Suite("Access levels")
struct AccessLevelTests {
    @Test func nothingIsPublicButWhatTheExceptionsList() throws {
        let root = DocsCommandTests.root
        let exceptions = try String(contentsOf: root.appendingPathComponent("scripts/dev/package-access.exceptions"), encoding: .utf8)
        var found: [String] = []
        for directory in ["Sources", "Tests/RedisTestSupport", "Tests/APITestSupport", "Tests/PlatformSimTestSupport"] {
            let files = FileManager.default.enumerator(at: root.appendingPathComponent(directory), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                let name = file.path.replacingOccurrences(of: root.path + "/", with: "")
                for (index, line) in lines.enumerated() {
                    let code = line.drop { $0 == " " }
                    guard !code.hasPrefix("//"),
                        code.split(separator: " ").prefix(while: { $0.hasPrefix("@") || $0 == "public" }).contains("public")
                    else { continue }
                    if code.hasPrefix("public import "), exceptions.contains(name),
                        exceptions.contains(String(code.dropFirst(14).prefix { $0 != " " }))
                    {
                        continue
                    }
                    found.append("\(name):\(index + 1): \(code.prefix(80))")
                }
            }
        }
        #expect(found.isEmpty, "public declarations (run scripts/dev/package-access.sh): \(found.prefix(20))")
    }
}
