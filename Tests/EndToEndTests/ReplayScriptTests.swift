import Foundation
import RedisTestSupport
import RichPushQueue
import Testing

/// scripts/replay.sh as an operator runs it, against devices that count what reaches them: a
/// window replays exactly the jobs in it, a replay pushes nothing twice to a device, and
/// --force pushes again to every device.
@Suite("replay.sh", .serialized)
struct ReplayScriptTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func replayByWindowAndByIDResendsExactlyTheSelectedJobs() async throws {
        try await withRedisServer { server in
            // A visibility timeout of 30 s, not the pipeline's 2: the test counts each job's run
            // exactly, and a full run on 2 cores once stalled the replayed job past 2 s, so it
            // was reclaimed and ran twice (6 suppressed pushes, not 3), as the queue promises.
            try await Pipeline.start(server: server, visibilityTimeout: .seconds(30)) { pipeline in
                func replay(_ arguments: [String]) async throws -> String {
                    let script = try await ChildProcess(
                        executable: URL(fileURLWithPath: "/bin/bash"),
                        arguments: [Self.root.appendingPathComponent("scripts/replay.sh").path] + arguments + [
                            "--queue-prefix", pipeline.prefix,
                        ],
                        environment: ["RICHPUSH_BIN": try richpushExecutable().path, "RICHPUSH_REDIS_URL": server.url],
                        logFile: server.directory.appendingPathComponent("replay-\(UUID().uuidString.prefix(4)).log"))
                    #expect(try await script.wait(timeout: .seconds(30)) == 0, "replay.sh \(arguments): \(script.log)")
                    return script.log
                }
                func now() -> String { String(JobQueue.nowMilliseconds()) }

                try await withSimulator(try pipeline.simulator(devices: 3, tap: .none)) { log in
                    try await withWorker(pipeline.worker()) {
                        func received(_ id: Int, _ event: String = "received") -> Int {
                            log.all.filter { $0.event == event && $0.richId == String(id) }.count
                        }
                        func send(_ message: String) async throws -> Int {
                            let id = try await pipeline.send(json: [
                                "message": message, "richType": "img", "payload": Data([1, 2, 3]).base64EncodedString(),
                            ])
                            try await waitUntil(timeout: .seconds(60), "\(message) to reach the 3 devices") { received(id) == 3 }
                            return id
                        }
                        let a = try await send("a")
                        let windowStart = now()
                        let b = try await send("b")
                        let windowEnd = now()
                        let c = try await send("c")

                        let dryRun = try await replay(["window", "--from", windowStart, "--to", windowEnd, "--dry-run"])
                        #expect(dryRun.contains("would replay 1 job(s)"), "\(dryRun)")
                        let window = try await replay(["window", "--from", windowStart, "--to", windowEnd])
                        #expect(window.contains("replayed 1 job(s)"), "\(window)")
                        // The replayed job ran, and every device had b already: suppressed, not pushed.
                        // (At least 3, then exactly 3: a count past 3, the job run twice, is named
                        // with the counts rather than waited out; a busy run once timed out here
                        // without saying what the status counted.)
                        try await waitUntil(timeout: .seconds(60), "the replayed job to run") {
                            ((try await pipeline.status(b)["counts"] as? [String: Int])?["duplicateSuppressed"] ?? 0) >= 3
                        }
                        let counts = try await pipeline.status(b)["counts"] as? [String: Int] ?? [:]
                        #expect(counts["duplicateSuppressed"] == 3, "\(counts)")

                        let forced = try await replay(["notification", "\(a)", "--force"])
                        #expect(forced.contains("cleared 3 delivery ledger entries of notification \(a)"), "\(forced)")
                        #expect(forced.contains("replayed 1 job(s)"), "\(forced)")
                        // Pushed again to every device, with a's collapse id: each device replaces
                        // the notification it shows, as iOS does, rather than showing a second one.
                        try await waitUntil(timeout: .seconds(60), "a to reach the devices again") { received(a, "collapsed") == 3 }
                        try await Task.sleep(for: .milliseconds(300))
                        #expect(received(a) == 3)
                        #expect(received(a, "collapsed") == 3)
                        #expect(received(b) == 3)
                        #expect(received(c) == 3)
                        let devicesOfA = Set(log.all.filter { $0.event == "collapsed" && $0.richId == String(a) }.map(\.device))
                        #expect(devicesOfA.count == 3)
                    }
                }
            }
        }
    }
}
