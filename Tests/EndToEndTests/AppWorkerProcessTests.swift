import Foundation
import RedisTestSupport
import Testing

/// `richpush worker` given a key-encryption key and no credential flags: it sends as the default
/// app's stored credentials, set with `richpush apps set default`.
@Suite("richpush worker with stored app credentials", .serialized)
struct AppWorkerProcessTests {
    @Test func theDefaultAppsStoredAPNsCredentialsCarryTheWorkersPushes() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "appcreds") { native in
                let kek = server.directory.appendingPathComponent("kek")
                let made = try await AppsCommandTests.run(["apps", "new-kek"], server: server, name: "kek")
                try Data(made.output.utf8).write(to: kek)
                let apns = try await native.startAPNsSim()
                try await waitUntil(timeout: .seconds(60), "apns-sim to listen") { apns.process.log.contains("listening") }
                // The simulator's own key, stored as the default app's; the worker gets none as flags.
                let flags = Dictionary(
                    uniqueKeysWithValues: stride(from: 0, to: apns.workerArguments.count - 1, by: 2).map {
                        (apns.workerArguments[$0], apns.workerArguments[$0 + 1])
                    })
                let set = try await AppsCommandTests.run(
                    [
                        "apps", "set", "default", "--redis-url", server.url, "--queue-prefix", native.prefix, "--kek-file", kek.path,
                        "--apns-key-file", flags["--apns-key-file"] ?? "", "--apns-key-id", NativeProcesses.keyID,
                        "--apns-team-id", NativeProcesses.teamID, "--apns-bundle-id", NativeProcesses.topic,
                    ],
                    server: server, name: "set-default")
                #expect(set.status == 0, "\(set.output)")
                // Without the key the worker cannot send as the app: it says what it needs.
                let endpoint = ["--apns-url", flags["--apns-url"] ?? "", "--apns-ca-file", flags["--apns-ca-file"] ?? ""]
                let refused = try await ChildProcess(
                    executable: try richpushExecutable(),
                    arguments: ["worker", "--redis-url", server.url, "--queue-prefix", native.prefix, "--adapter", "apns"] + endpoint,
                    logFile: server.directory.appendingPathComponent("no-kek.log"))
                let status = try await refused.wait(timeout: .seconds(60))
                #expect(status != 0 && status != nil)
                #expect(refused.log.contains("or the default app's APNs credentials with --kek-file"), "\(refused.log)")
                _ = try await native.startWorkers(["w1"], adapter: "apns", endpoint + ["--kek-file", kek.path])
                try await native.register(iPhones: 3, first: 0xA995)
                _ = try await native.createNotifications(2)
                try await waitUntil(timeout: .seconds(90), "six pushes accepted by apns-sim") {
                    apns.requests.filter { $0["status"] as? Int == 200 }.count == 6
                }
                #expect(apns.requests.allSatisfy { $0["status"] as? Int == 200 }, "\(apns.requests)")
            }
        }
    }
}
