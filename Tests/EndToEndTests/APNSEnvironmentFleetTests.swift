import Foundation
import RedisTestSupport
import RichPushCore
import Testing

/// One `richpush worker --adapter apns` process and two `richpush apns-sim` processes, one standing
/// in for Apple's production service and one for its sandbox, each refusing the other's device
/// tokens with 400 `BadDeviceToken` as Apple does. Alice has an App Store iPhone (production) and
/// a development iPhone (sandbox): each push reaches its own service and only it. A third
/// development token registered without its environment (as every registration made before
/// environments existed reads) goes to production, which refuses it.
@Suite("APNs environments through a worker process")
struct APNSEnvironmentFleetTests {
    static let productionToken = String(format: "%064lx", 0xA11CE01)
    static let sandboxToken = String(format: "%064lx", 0xA11CE02)
    static let unmarkedSandboxToken = String(format: "%064lx", 0xA11CE03)

    @Test func eachPushReachesItsEnvironmentsServiceAndOnlyIt() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "apnsenv") { native in
                let save = { (id: String, token: String, environment: APNSEnvironment) in
                    _ = try await native.installations.save(
                        Installation(
                            id: id, platform: .apns, handle: token, tags: ["username:alice"], owner: "alice",
                            updatedAt: 0, apnsEnvironment: environment), limits: RegistrationLimits())
                }
                try await save("appstore", Self.productionToken, .production)
                try await save("xcode", Self.sandboxToken, .sandbox)
                try await save("unmarked", Self.unmarkedSandboxToken, .production)
                let production = try await native.startAPNsSim([
                    "--other-environment-token", Self.sandboxToken,
                    "--other-environment-token", Self.unmarkedSandboxToken,
                ])
                let sandbox = try await native.startAPNsSim(["--other-environment-token", Self.productionToken], name: "apns-sandbox")
                try await waitUntil(timeout: .seconds(60), "both simulators to listen") {
                    production.process.log.contains("listening") && sandbox.process.log.contains("listening")
                }
                // The worker trusts both simulators' CAs, from one file.
                let cas = server.directory.appendingPathComponent("apns-cas.pem")
                let caFiles = [production.caFile, sandbox.caFile].compactMap { $0 }
                try Data(try caFiles.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n").utf8).write(to: cas)
                _ = try await native.startWorkers(
                    ["w1"], adapter: "apns",
                    [
                        "--apns-url", production.url, "--apns-sandbox-url", sandbox.url, "--apns-ca-file", cas.path, "--apns-topic",
                        NativeProcesses.topic,
                        "--apns-key-file", server.directory.appendingPathComponent("AuthKey.p8").path, "--apns-key-id",
                        NativeProcesses.keyID,
                        "--apns-team-id", NativeProcesses.teamID,
                    ])
                let notifications = 3
                let ids = try await native.createNotifications(notifications)
                func paths(_ simulator: NativeProcesses.Simulator, status: Int) -> [String] {
                    simulator.requests.filter { $0["status"] as? Int == status }.compactMap { $0["path"] as? String }
                }
                try await waitUntil(timeout: .seconds(90), "every push to reach a simulator") {
                    paths(production, status: 200).count == notifications && paths(production, status: 400).count == notifications
                        && paths(sandbox, status: 200).count == notifications
                }
                for id in ids {
                    try await waitUntil(timeout: .seconds(60), "notification \(id)'s outcomes") {
                        let counts = try await native.store.status(id: id)?.counts
                        return counts?["sent"] == 2 && counts?["failed"] == 1
                    }
                }
                // Each simulator saw only its own devices: the sandbox the development iPhone, and
                // production the App Store iPhone and the unmarked token, which it refused.
                #expect(Set(sandbox.requests.compactMap { $0["path"] as? String }) == ["/3/device/\(Self.sandboxToken)"])
                #expect(paths(production, status: 200) == Array(repeating: "/3/device/\(Self.productionToken)", count: notifications))
                #expect(paths(production, status: 400) == Array(repeating: "/3/device/\(Self.unmarkedSandboxToken)", count: notifications))
                #expect(production.requests.count == 2 * notifications && sandbox.requests.count == notifications)
                #expect(
                    production.requests.filter { $0["status"] as? Int == 400 }.allSatisfy { $0["reason"] as? String == "BadDeviceToken" })
                let status = try #require(try await native.store.status(id: ids[0]))
                let unmarked = status.devices.first { $0.installation == "unmarked" }
                #expect(unmarked?.state == "failed" && unmarked?.error?.contains("BadDeviceToken") == true, "\(status.devices)")
                // A 400 is not a dead token: the registration stays, for its owner to correct.
                #expect(try await native.installations.installation(id: "unmarked") != nil)
                // One provider token for both services.
                let tokens = (production.requests + sandbox.requests).compactMap { $0["token"] as? String }
                #expect(tokens.count == 3 * notifications && Set(tokens).count == 1)
            }
        }
    }
}
