import Crypto
import Foundation
import RedisTestSupport
import RichPushCore
import RichPushSimulator
import Testing

/// Web devices of `richpush device-sim`, every part a process but the API: they subscribe at
/// `richpush webpush-sim` (restricted to the worker's VAPID key), register their subscriptions,
/// and a `richpush worker` encrypts to them; each device decrypts with its own keys, fetches the
/// payload with Basic auth, shows the notification with More and opens the image, reporting the
/// same events as the iPhones and Android phones beside them.
@Suite("Web devices", .serialized)
struct WebDeviceTests {
    @Test func webDevicesDecryptFetchDisplayAndOpenTheImage() async throws {
        try await withWebPushFleet(platform: "webpush", devices: 2, adapter: "webpush") { fleet in
            let id = try await fleet.pipeline.send(json: [
                "message": "Check this image out!", "richType": "img",
                "payload": Data(RichPushFlowTests.image).base64EncodedString(),
            ])
            try await fleet.waitForOpened(id, devices: 2)
            for device in 0..<2 {
                let events = fleet.events(device: device, richId: id)
                #expect(
                    events.compactMap { $0["event"] as? String } == [
                        "received", "fetched", "scheduled", device % 2 == 0 ? "alert" : "banner", "opened",
                    ],
                    "device \(device): \(events)")
                #expect(events.allSatisfy { $0["message"] as? String == "Check this image out!" && $0["richType"] as? String == "img" })
                // Device 0's page is open (an in-page alert), device 1's is not (the browser's notification).
                let shown = try #require(events.first { ["alert", "banner"].contains($0["event"] as? String) })
                let detail = shown["detail"] as? String ?? ""
                #expect(
                    detail.hasPrefix(device == 0 ? "in-page alert \"Notification\"" : "browser notification:") && detail.contains("More"),
                    "\(detail)")
            }
            try fleet.expectSameImage(id, devices: 0..<2)
            // Each push passed the push service's checks, once per browser.
            let pushes = fleet.sim.lines.filter { $0["event"] as? String == "push" }
            #expect(pushes.count == 2 && pushes.allSatisfy { $0["status"] as? Int == 201 }, "\(pushes)")
            try await waitUntil(timeout: .seconds(60), "the status to count both devices opened") {
                (try await fleet.pipeline.status(id)["counts"] as? [String: Int])?["opened"] == 2
            }
        }
    }

    /// Browsers under the platforms' rules, for an app that shows nothing for its pushes: Chrome
    /// shows its own generic notification each time; Safari revokes the subscription after 3 in a
    /// row, leaving its push service, so the next push to it is refused there and its
    /// registration is marked gone, while Chrome's still gets it.
    @Test func safariRevokesASubscriptionWhosePushesShowNothing() async throws {
        // A seed under which device 0 is Safari and device 1 Chrome, half of them being Safari.
        var rules = DeviceRules()
        rules.safariShare = 0.5
        let seed = try #require(
            (1...200).first { seed in
                rules.seed = UInt64(seed)
                let book = DeviceRuleBook(rules: rules)
                return book.browser(of: 0) == .safari && book.browser(of: 1) == .chrome
            })
        try await withWebPushFleet(
            platform: "webpush", devices: 2, adapter: "webpush",
            deviceArguments: ["--app-shows-nothing", "--safari-share", "0.5", "--seed", String(seed)]
        ) { fleet in
            func events(_ name: String, device: Int) -> [[String: Any]] {
                NativeProcesses.lines(fleet.devices.log).filter { $0["event"] as? String == name && $0["device"] as? Int == device }
            }
            for index in 0..<3 {
                let id = try await fleet.pipeline.send(json: ["message": "sync \(index)", "richType": "text", "payload": "s\(index)"])
                try await waitUntil(timeout: .seconds(60), "both browsers to handle push \(id)") {
                    events("unshown", device: 0).contains { $0["richId"] as? String == String(id) }
                        && events("unshown", device: 1).contains { $0["richId"] as? String == String(id) }
                }
            }
            try await waitUntil(timeout: .seconds(60), "Safari to revoke") { !events("revoked", device: 0).isEmpty }
            #expect(events("generic", device: 1).count == 3)
            #expect(events("generic", device: 0).isEmpty && events("revoked", device: 1).isEmpty)
            let last = try await fleet.pipeline.send(json: ["message": "after", "richType": "text", "payload": "a"])
            try await waitUntil(timeout: .seconds(60), "the push after the revocation to be settled") {
                let counts = try await fleet.pipeline.status(last)["counts"] as? [String: Int] ?? [:]
                return counts["invalidToken"] == 1 && events("unshown", device: 1).contains { $0["richId"] as? String == String(last) }
            }
            #expect(!events("received", device: 0).contains { $0["richId"] as? String == String(last) })
        }
    }

    /// A simulator restarted with its state file goes on with its browsers' subscriptions, as a
    /// restarted browser does: the same endpoints and installations, no second registration with
    /// the same tags (before, each start subscribed afresh and registered new installations, and a
    /// fan-out retried after a restart reached the browser again through its second one).
    @Test func aRestartedSimulatorKeepsItsBrowsersSubscriptions() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("web-state-\(UUID().uuidString.prefix(8))")
        defer {
            try? FileManager.default.removeItem(at: state)
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: state.path + ".web.json"))
        }
        try await withWebPushFleet(platform: "webpush", devices: 2, adapter: "webpush", deviceArguments: ["--state-file", state.path]) {
            fleet in
            func registered(_ process: ChildProcess) -> [Int: String] {
                var found: [Int: String] = [:]
                for line in NativeProcesses.lines(process.log) where line["event"] as? String == "registered" {
                    if let device = line["device"] as? Int, let installation = line["installation"] as? String {
                        found[device] = installation
                    }
                }
                return found
            }
            let first = try await fleet.pipeline.send(json: [
                "message": "before", "richType": "img",
                "payload": Data(RichPushFlowTests.image).base64EncodedString(),
            ])
            try await fleet.waitForOpened(first, devices: 2)
            let before = registered(fleet.devices)
            #expect(before.count == 2, "\(fleet.devices.log.suffix(2000))")
            fleet.devices.signal(SIGTERM)
            #expect(try await fleet.devices.wait(timeout: .seconds(60)) != nil, "device-sim did not stop")

            let again = try await fleet.startDevices("device-sim-2")
            try await waitUntil(timeout: .seconds(60), "the restarted devices to listen") { again.log.contains("listening") }
            #expect(registered(again) == before, "the same installations: \(again.log.suffix(2000))")
            let subscribes = fleet.sim.lines.filter { $0["event"] as? String == "subscribe" }
            #expect(subscribes.count == 2, "no second subscription: \(subscribes)")
            let second = try await fleet.pipeline.send(json: ["message": "after", "richType": "text", "payload": "p"])
            try await waitUntil(timeout: .seconds(90), "both browsers to show the second notification") {
                Set(
                    NativeProcesses.lines(again.log).filter {
                        $0["event"] as? String == "received" && $0["richId"] as? String == String(second)
                    }
                    .compactMap { $0["device"] as? Int }) == [0, 1]
            }
            // One push per browser for each notification: the registry holds two browsers, not four.
            let pushes = fleet.sim.lines.filter { $0["event"] as? String == "push" && $0["status"] as? Int == 201 }
            #expect(pushes.count == 4, "\(pushes)")
            #expect(
                !NativeProcesses.lines(again.log).contains {
                    $0["event"] as? String == "received" && $0["richId"] as? String == String(first)
                })
        }
    }

    @Test func aMixedFleetGetsOneNotificationEachInItsOwnFormatAndOpensTheSameImage() async throws {
        // Devices 0, 3 iPhones; 1, 4 Android phones (through the hub); 2, 5 browsers (through webpush-sim).
        try await withWebPushFleet(platform: "all", devices: 6, adapter: "simulated,webpush") { fleet in
            let id = try await fleet.pipeline.send(json: [
                "message": "Check this image out!", "richType": "img",
                "payload": Data(RichPushFlowTests.image).base64EncodedString(),
            ])
            try await fleet.waitForOpened(id, devices: 6)
            let prefixes = [
                "in-app alert", "notification in the shade", "in-page alert", "system banner", "heads-up notification",
                "browser notification",
            ]
            for device in 0..<6 {
                let events = fleet.events(device: device, richId: id)
                let names = events.compactMap { $0["event"] as? String }
                #expect(
                    names == ["received", "fetched", "scheduled", device % 2 == 0 ? "alert" : "banner", "opened"],
                    "device \(device): \(events)")
                // Each platform shows it its own way (the app state alternates: even devices active).
                let shown = events.first { ["alert", "banner"].contains($0["event"] as? String) }?["detail"] as? String ?? ""
                #expect(shown.hasPrefix(prefixes[device]), "device \(device): \(shown)")
            }
            try fleet.expectSameImage(id, devices: 0..<6)
            // The browsers' pushes went to the push service, encrypted; the phones' through the hub.
            let pushes = fleet.sim.lines.filter { $0["event"] as? String == "push" }
            #expect(pushes.count == 2 && pushes.allSatisfy { $0["status"] as? Int == 201 }, "\(pushes)")
            try await waitUntil(timeout: .seconds(60), "the status to count six devices opened") {
                let status = try await fleet.pipeline.status(id)
                return (status["counts"] as? [String: Int])?["opened"] == 6 && (status["counts"] as? [String: Int])?["failed"] == 0
            }
        }
    }
}

/// A pipeline with `richpush webpush-sim`, one `richpush worker` through `adapter` with a VAPID
/// key made for the test, and `richpush device-sim` running `devices` devices of `platform`.
struct WebPushFleet {
    let pipeline: Pipeline
    let sim: NativeProcesses.Simulator
    let devices: ChildProcess
    let out: URL
    /// Starts another `richpush device-sim` with the same arguments, logging to `<name>.log`.
    let startDevices: (String) async throws -> ChildProcess

    /// The events the simulator reported about `richId` on `device`, in order.
    func events(device: Int, richId id: Int) -> [[String: Any]] {
        NativeProcesses.lines(devices.log).filter { $0["device"] as? Int == device && $0["richId"] as? String == String(id) }
    }

    func waitForOpened(_ id: Int, devices count: Int) async throws {
        do {
            try await waitUntil(timeout: .seconds(90), "\(count) devices to open notification \(id)") {
                Set(
                    NativeProcesses.lines(devices.log).filter {
                        $0["event"] as? String == "opened" && $0["richId"] as? String == String(id)
                    }
                    .compactMap { $0["device"] as? Int }
                ).count == count
            }
        } catch {
            // A crash's reason comes before its backtrace: show the log from there, not its end.
            let simLog = sim.process.log
            let crash = simLog.range(of: "💣") ?? simLog.range(of: "Fatal error") ?? simLog.range(of: "Crash")
            let shown = crash.map { String(simLog[$0.lowerBound...].prefix(6000)) } ?? String(simLog.suffix(3000))
            Issue.record("device-sim: \(devices.log.suffix(4000))\nwebpush-sim: \(shown)")
            throw error
        }
    }

    /// Every device's image view saved the image that was sent.
    func expectSameImage(_ id: Int, devices range: Range<Int>) throws {
        for device in range {
            let saved = try Data(contentsOf: out.appendingPathComponent("richpush-\(id)-device\(device).png"))
            #expect(Array(saved) == RichPushFlowTests.image, "device \(device) opened another image")
        }
    }
}

func withWebPushFleet(
    platform: String, devices: Int, adapter: String, deviceArguments: [String] = [],
    _ body: (WebPushFleet) async throws -> Void
) async throws {
    try await withRedisServer { server in
        try await Pipeline.start(server: server) { pipeline in
            try await NativeProcesses.with(server: server, keyPrefix: pipeline.prefix) { native in
                let sim = try await native.startWebPushSim()
                try await waitUntil(timeout: .seconds(60), "webpush-sim to listen") { sim.process.log.contains("listening") }
                let vapid = P256.Signing.PrivateKey()
                let keyFile = server.directory.appendingPathComponent("vapid.pem")
                try Data(vapid.pemRepresentation.utf8).write(to: keyFile)
                let out = server.directory.appendingPathComponent("images")
                let arguments =
                    [
                        "--devices", String(devices), "--platform", platform, "--app-state", "mixed", "--tap", "more", "--fire-delay", "0",
                        "--out", out.path, "--webpush-url", sim.url, "--webpush-ca-file", try #require(sim.caFile).path,
                        "--webpush-application-server-key", Base64URL.encode(vapid.publicKey.x963Representation),
                    ] + deviceArguments
                let deviceSim = try await native.startDeviceSim(api: pipeline.baseURL, arguments)
                do {
                    try await waitUntil(timeout: .seconds(60), "the devices to listen") { deviceSim.log.contains("listening") }
                } catch {
                    Issue.record("device-sim: \(deviceSim.log.suffix(3000))")
                    throw error
                }
                _ = try await native.startWorkers(
                    ["w1"], adapter: adapter,
                    sim.workerArguments + [
                        "--webpush-vapid-key-file", keyFile.path, "--webpush-subject", "mailto:ops@example.com",
                    ])
                try await body(
                    WebPushFleet(pipeline: pipeline, sim: sim, devices: deviceSim, out: out) { name in
                        try await native.startDeviceSim(api: pipeline.baseURL, arguments, name: name)
                    })
            }
        }
    }
}
