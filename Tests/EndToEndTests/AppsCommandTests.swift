import Foundation
import RedisTestSupport
import Testing

/// `richpush apps` as an operator meets it: a key-encryption key made, an app created from files,
/// its credentials never printed, a rotation, and a wrong key stopping the API at start.
@Suite("richpush apps", .serialized)
struct AppsCommandTests {
    /// Runs `richpush <arguments>` to its end: its exit status and output.
    static func run(
        _ arguments: [String], server: RedisServer, name: String, environment: [String: String] = [:]
    ) async throws -> (status: Int32?, output: String) {
        let process = try await ChildProcess(
            executable: try richpushExecutable(), arguments: arguments, environment: environment,
            logFile: server.directory.appendingPathComponent("apps-\(name).log"))
        let status = try await process.wait(timeout: .seconds(60))
        return (status, process.log)
    }

    @Test func createRotateAndAWrongKeyStopsTheAPI() async throws {
        try await withRedisServer { server in
            let directory = server.directory
            let redis = ["--redis-url", server.url, "--queue-prefix", "appscli"]
            func file(_ name: String, _ text: String) throws -> String {
                let url = directory.appendingPathComponent(name)
                try Data(text.utf8).write(to: url)
                return url.path
            }
            // Two keys, as `richpush apps new-kek` prints them.
            var keys: [String] = []
            for index in 0..<2 {
                let (status, output) = try await Self.run(["apps", "new-kek"], server: server, name: "kek\(index)")
                #expect(status == 0)
                keys.append(try file("kek\(index)", output))
            }
            let pem = TestCredentials.p8()
            let keyFile = try file("AuthKey.p8", pem)
            let account = try file("account.json", try TestCredentials.serviceAccount())
            let create = try await Self.run(
                ["apps", "create", "shop", "--name", "Shop"] + redis + [
                    "--kek-file", keys[0], "--apns-key-file", keyFile, "--apns-key-id", "KEYID12345",
                    "--apns-team-id", "TEAMID1234", "--apns-bundle-id", "com.example.shop", "--fcm-service-account", account,
                ],
                server: server, name: "create")
            #expect(create.status == 0, "\(create.output)")
            #expect(
                create.output.contains("\"bundleId\" : \"com.example.shop\"") && create.output.contains("\"publicKey\""), "\(create.output)"
            )
            #expect(!create.output.contains("PRIVATE KEY") && !create.output.contains(String(pem.split(separator: "\n")[1])))

            // Mistakes are named, and leave nothing behind.
            let badBundle = try await Self.run(
                ["apps", "create", "news"] + redis + [
                    "--kek-file", keys[0], "--apns-key-file", keyFile, "--apns-key-id", "KEYID12345",
                    "--apns-team-id", "TEAMID1234", "--apns-bundle-id", "com.example news",
                ], server: server, name: "bad-bundle")
            #expect(badBundle.status != 0 && badBundle.output.contains("no spaces"), "\(badBundle.output)")
            let noKEK = try await Self.run(["apps", "create", "news"] + redis, server: server, name: "no-kek")
            #expect(noKEK.status != 0 && noKEK.output.contains("key-encryption key"), "\(noKEK.output)")
            let list = try await Self.run(["apps", "list"] + redis, server: server, name: "list")
            #expect(
                list.status == 0 && list.output.contains("default\tv0") && list.output.contains("shop\tv1\tapns,fcm,webPush\tShop")
                    && !list.output.contains("news"),
                "\(list.output)")

            // The API refuses to start with the wrong key, naming the one it lacks.
            let wrongAPI = try await Self.run(["api", "--port", "0"] + redis + ["--kek-file", keys[1]], server: server, name: "api-wrong")
            #expect(wrongAPI.status != 0 && wrongAPI.output.contains("sealed under key-encryption key"), "\(wrongAPI.output)")

            // Rotation: new key current, old one previous; rekey; then the new key alone opens everything.
            let rekey = try await Self.run(
                ["apps", "rekey"] + redis + ["--kek-file", keys[1], "--previous-kek-file", keys[0]], server: server, name: "rekey")
            #expect(rekey.status == 0 && rekey.output.contains("re-sealed 3 credentials"), "\(rekey.output)")
            let check = try await Self.run(["apps", "check"] + redis + ["--kek-file", keys[1]], server: server, name: "check")
            #expect(check.status == 0 && check.output.contains("3 credentials open"), "\(check.output)")
            let old = try await Self.run(
                ["apps", "check"] + redis, server: server, name: "check-old", environment: ["RICHPUSH_KEK_FILE": keys[0]])
            #expect(old.status != 0 && old.output.contains("sealed under key-encryption key"), "\(old.output)")
            let remove = try await Self.run(["apps", "remove", "shop"] + redis, server: server, name: "remove")
            #expect(remove.status == 0 && remove.output.contains("removed shop"))
            let removeDefault = try await Self.run(["apps", "remove", "default"] + redis, server: server, name: "remove-default")
            #expect(removeDefault.status != 0 && removeDefault.output.contains("cannot be removed"))
        }
    }
}
