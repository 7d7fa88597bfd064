import Foundation
import RedisTestSupport
import RichPushNH
import Testing

/// `richpush apps nh-rules` and `richpush apps connection-string` as an operator runs them: the
/// connection string printed signs tokens the NH surface's check accepts, a rotated key stops
/// signing while the other goes on, and bad requests are plain CLI errors.
@Suite("richpush apps nh-rules and connection-string")
struct NHRulesCommandTests {
    @Test func theConnectionStringSignsAndARotationKeepsTheOtherKey() async throws {
        try await withRedisServer { server in
            let prefix = String(uniqueKeyPrefix("nhcli").dropLast())
            let common = ["--redis-url", server.url, "--queue-prefix", prefix]
            let kek = ["--kek-file", try await AppSchedulingCommandTests.kekFile(server).path]
            func run(_ arguments: [String], _ name: String) async throws -> (status: Int32?, output: String) {
                try await AppsCommandTests.run(arguments + common + kek, server: server, name: name)
            }
            #expect(try await run(["apps", "create", "shop"], "create").status == 0)
            let none = try await run(["apps", "nh-rules", "shop"], "none")
            #expect(none.status == 0 && none.output.contains("has no NH rules"), "\(none.output)")
            let made = try await run(["apps", "nh-rules", "shop", "--defaults"], "defaults")
            #expect(made.status == 0, "\(made.output)")
            #expect(made.output.contains("DefaultFullSharedAccessSignature\tListen,Manage,Send"), "\(made.output)")
            #expect(made.output.contains("DefaultListenSharedAccessSignature\tListen"), "\(made.output)")
            let shown = try await AppsCommandTests.run(["apps", "show", "shop"] + common, server: server, name: "show")
            #expect(shown.output.contains("\"nhRules\""), "apps show lists the rules: \(shown.output)")

            func connectionString(_ extra: [String], _ name: String) async throws -> NHConnectionString {
                let printed = try await run(["apps", "connection-string", "shop", "--endpoint", "sb://127.0.0.1:8443/"] + extra, name)
                try #require(printed.status == 0, "\(printed.output)")
                let line = try #require(printed.output.split(separator: "\n").last.map(String.init))
                return try NHConnectionString(parsing: line)
            }
            func accepted(_ string: NHConnectionString, _ rules: [NHAccessRule]) -> Bool {
                let header = SharedAccessSignature.header(
                    resourceURI: string.httpsEndpoint + "shop", keyName: string.keyName, key: string.key,
                    expiry: Int64(Date().timeIntervalSince1970) + 300)
                return
                    (try? NHAuthorizer.authorize(
                        header: header, host: "127.0.0.1:8443", path: "/shop/messages/", rules: rules, needs: .send,
                        now: Int64(Date().timeIntervalSince1970))) != nil
            }
            let primary = try await connectionString([], "primary")
            let secondary = try await connectionString(["--secondary"], "secondary")
            #expect(primary.keyName == "DefaultFullSharedAccessSignature" && primary.key != secondary.key)
            #expect(primary.description.hasPrefix("Endpoint=sb://127.0.0.1:8443/;SharedAccessKeyName="))
            let withHub = try await connectionString(["--entity-path"], "entity")
            #expect(withHub.entityPath == "shop")

            // The rules as the store holds them, for the check: the keys the strings carry sign.
            func rules() async throws -> [NHAccessRule] {
                let full = try await connectionString([], "full-\(UUID().uuidString.prefix(6))")
                let second = try await connectionString(["--secondary"], "second-\(UUID().uuidString.prefix(6))")
                return [
                    NHAccessRule(name: full.keyName, primaryKey: full.key, secondaryKey: second.key, rights: [.listen, .send, .manage])
                ]
            }
            let before = try await rules()
            #expect(accepted(primary, before) && accepted(secondary, before))
            let rotated = try await run(
                ["apps", "nh-rules", "shop", "--rotate", "DefaultFullSharedAccessSignature", "--key", "primary"], "rotate")
            #expect(rotated.status == 0, "\(rotated.output)")
            let after = try await rules()
            #expect(!accepted(primary, after), "the rotated key no longer signs")
            #expect(accepted(secondary, after), "the other key goes on signing: no downtime")
            #expect(after[0].primaryKey != primary.key)

            // A listen-only rule, then refusals as CLI errors.
            let added = try await run(["apps", "nh-rules", "shop", "--add", "Devices", "--rights", "listen"], "add")
            #expect(added.status == 0 && added.output.contains("Devices\tListen"), "\(added.output)")
            for (arguments, message) in [
                (["apps", "nh-rules", "shop", "--add", "Devices", "--rights", "Listen"], "already has a rule 'Devices'"),
                (["apps", "nh-rules", "shop", "--add", "X", "--rights", "Read"], "'Read' is not Listen, Send or Manage"),
                (["apps", "nh-rules", "shop", "--add", "X", "--rights", "Manage"], "Manage goes with Listen and Send"),
                (["apps", "nh-rules", "shop", "--remove", "Nope"], "has no rule 'Nope'"),
                (["apps", "nh-rules", "nope", "--defaults"], "nope"),
                (["apps", "connection-string", "shop", "--endpoint", "https://h/"], "--endpoint must be sb://HOST:PORT/"),
                (["apps", "connection-string", "shop", "--endpoint", "sb://h/", "--rule", "Nope"], "has no rule 'Nope'"),
            ] {
                let refused = try await run(arguments, "refused-\(UUID().uuidString.prefix(6))")
                #expect(refused.status != 0 && refused.output.contains(message), "\(arguments): \(refused.output)")
            }
        }
    }
}
