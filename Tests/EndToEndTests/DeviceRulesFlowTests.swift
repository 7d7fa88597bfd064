import Foundation
import RedisTestSupport
import Testing

/// `richpush device-sim` under the platforms' rules (its default), every part a real process but
/// the API: a worker through the simulated hub, the devices in one condition each, simulated time
/// sped up with `--time-scale` so an hourly budget passes in seconds.
@Suite("Devices under the platforms' rules", .serialized)
struct DeviceRulesFlowTests {
    /// Apple's background budget: an iPhone in the background takes its burst of 3 background
    /// pushes, holds the 4th back and lets the 5th and 6th replace it (iOS keeps one), then hands
    /// the newest to the app once the budget has a token again.
    @Test func anIPhoneInTheBackgroundTakesItsBurstThenKeepsOnlyTheNewest() async throws {
        // 40 simulated seconds a second: the next token comes 1,200 simulated seconds (30 s) later.
        try await withRuledDevices(["--app-state", "background", "--tap", "none", "--time-scale", "40"]) { fleet in
            var ids: [Int] = []
            for index in 0..<6 {
                ids.append(try await fleet.pipeline.send(json: ["message": "update \(index)", "richType": "text", "payload": "p\(index)"]))
            }
            try await fleet.waitFor("4 fetches and 2 coalesced pushes", timeout: .seconds(120)) {
                $0.count { $0["event"] as? String == "fetched" } == 4 && $0.count { $0["event"] as? String == "coalesced" } == 2
            }
            let events = fleet.events
            let deferred = RuledFleet.richIDs(of: "deferred", in: events)
            #expect(deferred.count == 3, "\(events)")
            let fetched = RuledFleet.richIDs(of: "fetched", in: events)
            // The one handed on after the wait is the last one held back.
            #expect(fetched.last == deferred.last)
            #expect(
                Set(fetched).union(RuledFleet.richIDs(of: "coalesced", in: events))
                    == Set(ids.map(String.init)))
            #expect(RuledFleet.detail(events.first { $0["event"] as? String == "deferred" }).contains("background budget spent"))
        }
    }

    /// A force-quit iPhone is not woken for a background push; an alert still reaches the user,
    /// with the image the notification service extension attached.
    @Test func aForceQuitIPhoneWakesOnlyForAlerts() async throws {
        try await withRuledDevices(["--population", "force-quit=1", "--tap", "more"]) { fleet in
            let silent = try await fleet.pipeline.send(json: ["message": "silent", "richType": "text", "payload": "quiet"])
            try await fleet.waitFor("the silent push dropped") { $0.contains { $0["event"] as? String == "dropped" } }
            let dropped = try #require(fleet.events.first { $0["event"] as? String == "dropped" })
            #expect(dropped["richId"] as? String == String(silent))
            #expect(RuledFleet.detail(dropped).contains("force-quit"))
            let alert = try await fleet.pipeline.send(json: [
                "message": "look", "richType": "text", "payload": "shown", "delivery": "alert",
            ])
            try await fleet.waitFor("the alert opened") { $0.contains { $0["event"] as? String == "opened" } }
            let story = fleet.events.filter { $0["richId"] as? String == String(alert) }.compactMap { $0["event"] as? String }
            #expect(story == ["received", "fetched", "banner", "opened"], "\(fleet.events)")
            let banner = RuledFleet.detail(fleet.events.first { $0["event"] as? String == "banner" })
            #expect(banner.contains("with the attachment"), "\(banner)")
            // The silent push never reached the app: nothing was fetched for it.
            #expect(!fleet.events.contains { $0["richId"] as? String == String(silent) && $0["event"] as? String != "dropped" })
        }
    }

    /// `auto`: a force-quit iPhone gets the silent push first (the hub knows nothing of it yet),
    /// which iOS drops; the next one, its silent push unfetched, is an alert whose extension
    /// attaches the media through the signed URL, and its status entry says why.
    @Test func autoTurnsAForceQuitIPhoneToAlertsOnceItsSilentPushGoesUnanswered() async throws {
        try await withRuledDevices(["--population", "force-quit=1", "--tap", "none"]) { fleet in
            let first = try await fleet.pipeline.send(json: ["message": "one", "richType": "text", "payload": "p1", "delivery": "auto"])
            try await fleet.waitFor("the silent push dropped") { $0.contains { $0["event"] as? String == "dropped" } }
            let second = try await fleet.pipeline.send(json: ["message": "two", "richType": "text", "payload": "p2", "delivery": "auto"])
            try await fleet.waitFor("the alert shown") { $0.contains { $0["event"] as? String == "banner" } }
            let story = fleet.events.filter { $0["richId"] as? String == String(second) }
            #expect(story.compactMap { $0["event"] as? String } == ["received", "fetched", "banner"], "\(story)")
            #expect(RuledFleet.detail(story.first { $0["event"] as? String == "banner" }).contains("with the attachment"))
            let devices = try #require(try await fleet.pipeline.status(second)["devices"] as? [[String: Any]])
            let strategy = devices.first?["strategy"] as? String ?? ""
            #expect(strategy.hasPrefix("alert: silent push \(first) was not fetched"), "\(devices)")
            let firstDevices = try #require(try await fleet.pipeline.status(first)["devices"] as? [[String: Any]])
            let firstStrategy = firstDevices.first?["strategy"] as? String ?? ""
            #expect(firstStrategy.hasPrefix("silent: first silent push"), "\(firstDevices)")
        }
    }

    /// The notification service extension has its time (Apple: about 30 s; 1 s here) to fetch the
    /// media from the alert's `richUrl`: a server that never answers leaves the original alert
    /// shown without media, and the user's More opens the app, which fetches it through its own API.
    @Test func theExtensionsTimeLimitShowsTheOriginalAlert() async throws {
        let (socket, port) = try RedisServer.loopbackSocket(listening: true)
        defer { close(socket) }
        try await withRuledDevices(
            ["--app-state", "background", "--tap", "more", "--extension-seconds", "1"], fetchHost: "http://127.0.0.1:\(port)"
        ) { fleet in
            let id = try await fleet.pipeline.send(json: ["message": "late", "richType": "text", "payload": "later", "delivery": "alert"])
            try await fleet.waitFor("the alert opened") { $0.contains { $0["event"] as? String == "opened" } }
            let story = fleet.events.filter { $0["richId"] as? String == String(id) }
            #expect(story.compactMap { $0["event"] as? String } == ["received", "unattached", "banner", "opened"], "\(story)")
            #expect(RuledFleet.detail(story.first { $0["event"] as? String == "unattached" }).contains("within 1 s"))
            #expect(RuledFleet.detail(story.first { $0["event"] as? String == "banner" }).contains("original alert without media"))
        }
    }

    /// Android's Doze: a normal-priority message waits for the device's next maintenance window;
    /// a high-priority one arrives at once.
    @Test func dozeHoldsNormalPriorityUntilTheMaintenanceWindow() async throws {
        // Windows every 900 simulated seconds: 15 s apart at 60×.
        try await withRuledDevices([
            "--platform", "fcm", "--population", "doze=1", "--tap", "none", "--time-scale", "60", "--doze-window", "900",
        ]) {
            fleet in
            let normal = try await fleet.pipeline.send(json: ["message": "later", "richType": "text", "payload": "n", "priority": "normal"])
            try await fleet.waitFor("the normal-priority message deferred") { $0.contains { $0["event"] as? String == "deferred" } }
            let high = try await fleet.pipeline.send(json: ["message": "now", "richType": "text", "payload": "h"])
            try await fleet.waitFor("both fetched", timeout: .seconds(90)) { $0.count { $0["event"] as? String == "fetched" } == 2 }
            let events = fleet.events
            let deferred = try #require(events.first { $0["event"] as? String == "deferred" })
            #expect(deferred["richId"] as? String == String(normal))
            #expect(RuledFleet.detail(deferred).contains("Doze"))
            #expect(!events.contains { $0["event"] as? String == "deferred" && $0["richId"] as? String == String(high) })
            // The normal one reached the app no sooner than the window its deferral named.
            let due = try #require((deferred["detail"] as? String)?.firstMatch(of: /due in (\d+) s/).flatMap { Int($0.1) })
            let fetchedAt = try #require(
                events.first { $0["event"] as? String == "fetched" && $0["richId"] as? String == String(normal) }?["at"] as? Int)
            let deferredAt = try #require(deferred["at"] as? Int)
            #expect(
                fetchedAt - deferredAt >= (due - 1) * 1_000_000 / 60,
                "due in \(due) s simulated, fetched after \(fetchedAt - deferredAt) µs")
        }
    }

    /// An iPhone off the network is kept one push by APNs (the newest); back online it takes that
    /// one, then asks the API what else it missed and fetches those: all three reach the app.
    @Test func anOfflineIPhoneBackOnlineCatchesUpOnWhatAPNsDidNotKeep() async throws {
        // 1,800 simulated seconds offline: 30 s at 60×, time to send three and have them held.
        try await withRuledDevices(["--population", "offline=1", "--tap", "none", "--time-scale", "60", "--offline-for", "1800"]) {
            fleet in
            var ids: [Int] = []
            for index in 0..<3 {
                let id = try await fleet.pipeline.send(json: ["message": "while away \(index)", "richType": "text", "payload": "a\(index)"])
                ids.append(id)
                try await waitUntil(timeout: .seconds(25), "push \(id) to be held") {
                    (try await fleet.pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                }
            }
            try await fleet.waitFor("three fetches", timeout: .seconds(120)) { $0.count { $0["event"] as? String == "fetched" } == 3 }
            let events = fleet.events
            #expect(events.contains { $0["event"] as? String == "online" })
            let fetchedIDs = RuledFleet.richIDs(of: "fetched", in: events)
            #expect(Set(fetchedIDs) == Set(ids.map(String.init)), "fetched \(fetchedIDs) of \(ids): \(events)")
            #expect(fetchedIDs.count == 3, "fetched \(fetchedIDs)")
            // The newest came as the push APNs kept; the two before it through the catch-up.
            #expect(RuledFleet.richIDs(of: "received", in: events).first == String(ids[2]))
            #expect(
                RuledFleet.richIDs(of: "caught-up", in: events)
                    == [ids[0], ids[1]].map(String.init))
        }
    }

    /// Rule options that cannot hold are refused with the reason and a non-zero exit, before any
    /// device registers.
    @Test func badRuleOptionsAreRefusedWithTheReason() async throws {
        let base = ["device-sim", "--user", "alice", "--password", "pw", "--api", "http://127.0.0.1:9"]
        for (arguments, words) in [
            (["--population", "sleeping=1"], "unknown device condition 'sleeping'"),
            (["--population", "background=0"], "above 0"),
            (["--lenient", "--population", "doze=1"], "--lenient devices have no population"),
            (["--time-scale", "0"], "time scale"),
            (["--population", "doze=1", "--population-file", "/nonexistent"], "not both"),
            (["--population-file", "/nonexistent/population.json"], "cannot read the population file"),
        ] {
            let (status, output) = try await runTool(try richpushExecutable().path, base + arguments)
            #expect(status != 0, "\(arguments) was accepted")
            #expect(output.contains(words), "\(arguments): \(output)")
            #expect(!output.contains("listening"))
        }
    }

    /// A device-sim with the rules (`arguments` added) for one device of alice, and one worker
    /// through the simulated hub whose alerts carry `fetchHost` (default: the API) as the fetch URL.
    private func withRuledDevices(
        _ arguments: [String], fetchHost: String? = nil, _ body: (RuledFleet) async throws -> Void
    ) async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                try await NativeProcesses.with(server: server, keyPrefix: pipeline.prefix) { native in
                    let devices = try await native.startDeviceSim(
                        api: pipeline.baseURL, ["--devices", "1", "--fire-delay", "0"] + arguments)
                    do {
                        try await waitUntil(timeout: .seconds(60), "the devices to listen") { devices.log.contains("listening") }
                    } catch {
                        Issue.record("device-sim: \(devices.log.suffix(3000))")
                        throw error
                    }
                    let host = fetchHost ?? pipeline.baseURL.absoluteString
                    _ = try await native.startWorkers(["w1"], adapter: "simulated", ["--api-base-url", host])
                    try await body(RuledFleet(pipeline: pipeline, devices: devices))
                }
            }
        }
    }
}

/// The pipeline and the device-sim process of a ``DeviceRulesFlowTests`` test.
struct RuledFleet {
    let pipeline: Pipeline
    let devices: ChildProcess

    /// The `richId` of each event named `name`, in order.
    static func richIDs(of name: String, in events: [[String: Any]]) -> [String] {
        var ids: [String] = []
        for event in events where (event["event"] as? String) == name {
            if let id = event["richId"] as? String { ids.append(id) }
        }
        return ids
    }

    /// An event's `detail`, or "" when it has none.
    static func detail(_ event: [String: Any]?) -> String { (event?["detail"] as? String) ?? "" }

    /// Every event the devices reported so far, in order.
    var events: [[String: Any]] { NativeProcesses.lines(devices.log) }

    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: @escaping ([[String: Any]]) -> Bool) async throws {
        do {
            try await waitUntil(timeout: timeout, what) { condition(events) }
        } catch {
            Issue.record("device-sim: \(devices.log.suffix(4000))")
            throw error
        }
    }
}
