import Foundation
import RedisTestSupport
import Testing
import Yams

/// docker-compose.yml cannot be run here (no Docker engine), so it is checked instead: it
/// validates with docker-compose, and every `richpush` command in it names a real subcommand
/// with real flags.
@Suite("docker-compose.yml")
struct ComposeFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func validatesWithDockerCompose() throws {
        let compose = try #require(Self.which("docker-compose"), "docker-compose is not installed: `sudo apt-get install docker-compose` (scripts/test.sh does)")
        let (status, output) = try Self.run(compose, ["-f", Self.root.appendingPathComponent("docker-compose.yml").path, "config", "-q"])
        #expect(status == 0, "docker-compose config: \(output)")
    }

    @Test func everyRichpushCommandIsRealWithRealFlags() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(document["services"] as? [String: Any])
        #expect(Set(services.keys).isSuperset(of: ["redis", "api", "worker", "device-sim", "prometheus"]))
        var checked = 0
        for (name, value) in services.sorted(by: { $0.key < $1.key }) {
            guard let service = value as? [String: Any], let command = service["command"] as? [String] else { continue }
            for invocation in Self.richpushInvocations(command) {
                let words = invocation.prefix { !$0.hasPrefix("-") }
                let flags = invocation.filter { $0.hasPrefix("--") }.map { String($0.split(separator: "=")[0]) }
                let (status, help) = try Self.run(try richpushExecutable().path, Array(words) + ["--help"])
                #expect(status == 0, "service \(name): `richpush \(words.joined(separator: " "))` is not a subcommand: \(help)")
                for flag in flags {
                    #expect(help.contains(flag), "service \(name): `richpush \(words.joined(separator: " "))` has no \(flag)")
                }
                checked += 1
            }
        }
        #expect(checked >= 5, "found only \(checked) richpush commands")
    }

    @Test func redisIsConfiguredNotToLoseData() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let redis = try #require((document["services"] as? [String: Any])?["redis"] as? [String: Any])
        let command = (redis["command"] as? [String] ?? []).joined(separator: " ")
        #expect(command.contains("--appendonly yes") && command.contains("--appendfsync everysec") && command.contains("--maxmemory-policy noeviction"))
        #expect(redis["healthcheck"] != nil && redis["volumes"] != nil)
    }

    /// `["richpush", "api", …]`, or each `richpush …` inside `["sh", "-c", "…"]`.
    static func richpushInvocations(_ command: [String]) -> [[String]] {
        if command.first == "richpush" { return [Array(command.dropFirst())] }
        guard command.first == "sh", command.count == 3 else { return [] }
        return command[2].components(separatedBy: CharacterSet(charactersIn: "|&;")).compactMap { part in
            let words = part.split(separator: " ").map(String.init)
            guard words.first == "richpush" else { return nil }
            return Array(words.dropFirst())
        }
    }

    static func which(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        return nil
    }

    static func run(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
