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

    @Test func validatesWithDockerCompose() async throws {
        let compose = try #require(
            Self.which("docker-compose"), "docker-compose is not installed: `sudo apt-get install docker-compose` (scripts/test.sh does)")
        let (status, output) = try await runTool(
            compose, ["-f", Self.root.appendingPathComponent("docker-compose.yml").path, "config", "-q"])
        #expect(status == 0, "docker-compose config: \(output)")
    }

    @Test func everyRichpushCommandIsRealWithRealFlags() async throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(document["services"] as? [String: Any])
        #expect(Set(services.keys).isSuperset(of: ["redis", "api", "worker", "device-sim", "prometheus", "grafana"]))
        var checked = 0
        for (name, value) in services.sorted(by: { $0.key < $1.key }) {
            guard let service = value as? [String: Any], let command = service["command"] as? [String] else { continue }
            for invocation in Self.richpushInvocations(command) {
                let words = invocation.prefix { !$0.hasPrefix("-") }
                let flags = invocation.filter { $0.hasPrefix("--") }.map { String($0.split(separator: "=")[0]) }
                let (status, help) = try await runTool(try richpushExecutable().path, Array(words) + ["--help"])
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
        #expect(
            command.contains("--appendonly yes") && command.contains("--appendfsync everysec")
                && command.contains("--maxmemory-policy noeviction"))
        #expect(redis["healthcheck"] != nil && redis["volumes"] != nil)
    }

    /// Prometheus scrapes the ports the API and the workers really listen on.
    @Test func prometheusScrapesTheAPIAndEveryWorker() throws {
        let compose = try #require(
            try Yams.load(yaml: String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8))
                as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])
        func flag(_ service: String, _ name: String) -> String? {
            let command = ((services[service] as? [String: Any])?["command"] as? [String]) ?? []
            return command.firstIndex(of: name).flatMap { command.indices.contains($0 + 1) ? command[$0 + 1] : nil }
        }
        let prometheus = try #require(
            try Yams.load(yaml: String(contentsOf: Self.root.appendingPathComponent("deploy/prometheus.yml"), encoding: .utf8))
                as? [String: Any])
        let jobs = try #require(prometheus["scrape_configs"] as? [[String: Any]])
        let api = try #require(jobs.first { $0["job_name"] as? String == "richpush-api" })
        let apiTargets = ((api["static_configs"] as? [[String: Any]])?.first?["targets"] as? [String]) ?? []
        #expect(apiTargets == ["api:\(try #require(flag("api", "--port")))"])
        let worker = try #require(jobs.first { $0["job_name"] as? String == "richpush-worker" })
        let discovery = try #require((worker["dns_sd_configs"] as? [[String: Any]])?.first)
        #expect(discovery["names"] as? [String] == ["worker"])
        #expect((discovery["port"] as? Int).map(String.init) == flag("worker", "--metrics-port"))
        #expect(flag("worker", "--metrics-host") == "0.0.0.0")
        let grafana = try #require(services["grafana"] as? [String: Any])
        let volumes = (grafana["volumes"] as? [String]) ?? []
        for volume in volumes {
            let source = String(volume.split(separator: ":")[0])
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(source).path), "\(volume)")
        }
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

}
