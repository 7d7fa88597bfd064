import APITestSupport
import AsyncHTTPClient
import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A Redis filled by a richpush built before apps existed (Fixtures/before-apps.keys.json, made by
/// scripts/dev/upgrade-fixture.sh: each key's DUMP and its time to live when it was written,
/// restored with that time to live, so the fixture holds on any date) is schema 1: the API and the
/// workers refuse it until `richpush migrate` (a dry run first) converts it. Then it keeps working
/// as the default app: its users sign in, its API key works, the notification queued before the
/// upgrade and the one scheduled then are delivered, its webhook is there, and new sends work.
@Suite("Upgrade from before apps", .serialized)
struct UpgradeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test func aRedisWrittenBeforeAppsIsTheDefaultApps() async throws {
        let ids = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("before-apps.json")))
                as? [String: String])
        let token = try String(contentsOf: Self.fixtures.appendingPathComponent("before-apps.token"), encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let queued = try #require(ids["queued"].flatMap(Int.init)), scheduled = try #require(ids["scheduled"].flatMap(Int.init))

        try await withRedisServer { server in
            try await Self.restoreFixture("before-apps.keys.json", into: server)
            #expect(try await server.probe("EXISTS", "richpush:user:alice").int == 1, "the fixture was not loaded")
            try await Self.migrate(server)
            try await Pipeline.start(server: server, prefix: "richpush") { pipeline in
                // Its users and their devices, as they were.
                let listed = try await pipeline.call("GET", "/api/notifications", as: "alice")
                #expect(listed.status == 200)
                #expect(
                    (listed.json["notifications"] as? [[String: Any]] ?? []).contains { $0["id"] as? String == String(queued) },
                    "\(listed.json)")
                // Its API key, made before apps: the default app's.
                var request = HTTPClientRequest(
                    url: pipeline.baseURL.appendingPathComponent("api/notifications/\(scheduled)/status").absoluteString)
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                #expect(try await TestHTTP.client.execute(request, timeout: .seconds(30)).status.code == 200)
                // Its webhook.
                let hooks = try await pipeline.call("GET", "/api/webhooks", as: "root")
                #expect(
                    (hooks.json["webhooks"] as? [[String: Any]] ?? []).contains { $0["url"] as? String == "http://127.0.0.1:9/hook" },
                    "\(hooks.json)")

                try await withServices(pipeline.process().services) {
                    // Queued before the upgrade: alice's device; scheduled then: both devices of `news`.
                    for (id, user, devices) in [(queued, "alice", 1), (scheduled, "root", 2)] {
                        try await waitUntil(timeout: .seconds(60), "notification \(id) from before the upgrade to reach the hub") {
                            (try await pipeline.status(id, as: user)["counts"] as? [String: Int])?["held"] == devices
                        }
                    }
                    // And a new one.
                    let new = try await pipeline.send(
                        as: "root", json: ["message": "after", "richType": "text", "payload": "p", "target": "news"])
                    try await waitUntil(timeout: .seconds(60), "a notification sent after the upgrade to reach the hub") {
                        (try await pipeline.status(new, as: "root")["counts"] as? [String: Int])?["held"] == 2
                    }
                }
            }
        }
    }

    /// The processes refuse the fixture's schema 1; a dry run counts its two status hashes and
    /// writes nothing; the migration merges them; a second run has nothing to do.
    static func migrate(_ server: RedisServer) async throws {
        let richpush = try richpushExecutable().path
        let redis = ["--redis-url", server.url]
        let statusKeys = ["richpush:{q0}:status:1", "richpush:{q0}:status:2"]
        for command in [["api", "--port", "0"], ["worker"]] {
            let process = try await ChildProcess(
                executable: URL(fileURLWithPath: richpush), arguments: command + redis,
                logFile: server.directory.appendingPathComponent("refused-\(command[0]).log"))
            let status = try await process.wait(timeout: .seconds(120))
            if status == nil {
                process.signal(SIGKILL)
                _ = try await process.wait(timeout: .seconds(30))
            }
            #expect(
                status != nil && status != 0 && process.log.contains("schema 1") && process.log.contains("richpush migrate"),
                "richpush \(command[0]) started on schema 1 data: \(process.log.suffix(2000))")
        }
        let dry = try await runTool(richpush, ["migrate", "--dry-run"] + redis)
        #expect(dry.status == 0 && dry.output.contains("would merge 2 status hashes"), "\(dry.output)")
        #expect(try await server.probe("EXISTS", statusKeys[0], statusKeys[1]).int == 2, "a dry run writes nothing")
        let run = try await runTool(richpush, ["migrate"] + redis)
        #expect(run.status == 0 && run.output.contains("schema 1 → 2") && run.output.contains("merged 2 status hashes"), "\(run.output)")
        #expect(try await server.probe("EXISTS", statusKeys[0], statusKeys[1]).int == 0)
        let again = try await runTool(richpush, ["migrate"] + redis)
        #expect(again.status == 0 && again.output.contains("schema 2 already"), "\(again.output)")
    }

    /// Restores every key of a fixture written by scripts/dev/redis_keys.py, each with the time to
    /// live it had when the fixture was written (counted from now).
    static func restoreFixture(_ name: String, into server: RedisServer) async throws {
        struct Fixture: Decodable {
            struct Key: Decodable {
                let key: String
                let pttl: Int
                let dump: String
            }
            let keys: [Key]
        }
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: fixtures.appendingPathComponent(name)))
        #expect(!fixture.keys.isEmpty, "the fixture \(name) holds no keys")
        for entry in fixture.keys {
            let hex = Array(entry.dump.utf8)
            let bytes = try stride(from: 0, to: hex.count, by: 2).map { index in
                try #require(
                    UInt8(String(decoding: hex[index..<min(index + 2, hex.count)], as: UTF8.self), radix: 16), "bad hex in \(entry.key)")
            }
            try await server.probe("RESTORE", entry.key, max(entry.pttl, 0), bytes)
        }
    }
}
