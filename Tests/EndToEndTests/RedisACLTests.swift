import Foundation
import Hiredis
import RedisTestSupport
import RichPushAdapters
import RichPushCore
import RichPushQueue
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ACL of docs/redis-acl.md is the one RichPush runs under: every process and CLI command an
/// operator runs, as that user on a private Redis, with no denial in `ACL LOG`.
@Suite("Redis ACL of docs/redis-acl.md", .serialized)
struct RedisACLTests {
    static let secret = "whsec_acl-test-0123456789"

    /// Granted, but this test does not make RichPush need them; each says why it is granted.
    static let grantedButNotRunHere: [String: String] = [
        "xtrim": "the worker's housekeeping (every 60 s) trims the stream past its retention",
        "xclaim": "extends or releases the leases of long jobs, and takes over the jobs of a worker that died",
        "decrby": "a user's payload-bytes quota is given back when payloads pass the retention (days)",
        "zmscore": "pushes are checked against tokens APNs or FCM reported gone (not the simulated hub)",
        "llen": "`richpush stats` reads the lane lengths of apps with jobs waiting (none wait when this test reads its stats)",
    ]

    /// The issue's test: the API (replicated durability), `users add`, `keys create|revoke`,
    /// `ping`, `stats`, `dlq list`, `replay --dry-run`, `users unlock` (with and without `--address`), a worker with the
    /// simulated hub, its sweeper and webhook dispatcher, and a device simulator, all as the ACL
    /// user; an immediate, a scheduled, a cancelled, a throttled and an expiring notification
    /// arrive (or expire) as they should, a failing webhook receiver gets its events on a retry,
    /// and Redis denied nothing. Every command the ACL grants was run, or is named above.
    @Test func everyProcessRunsAsTheDocumentedUserWithoutADenial() async throws {
        let acl = try DocumentedACL.load()
        let prefix = try acl.prefix
        let password = UUID().uuidString
        let richpush = try richpushExecutable().path
        try await withRedisServer { server in
            try await Self.withReplica(of: server) {
                try await acl.apply(on: server, password: password)
                try await server.probe(RedisCommand("CONFIG", "RESETSTAT"))
                let url = acl.url(server, password: password)
                let common = ["--redis-url", url, "--queue-prefix", prefix]
                func cli(_ arguments: [String], _ what: String) async throws -> String {
                    let (status, output) = try await runTool(richpush, arguments)
                    #expect(status == 0, "richpush \(what): \(output)")
                    return output
                }
                _ = try await cli(["users", "add", "alice", "--password", "alice-pw", "--cost", "4"] + common, "users add")
                let created = try await cli(["keys", "create", "alice", "--scope", "read"] + common, "keys create")
                let keyID = try #require(
                    created.split(separator: "\n").first?.split(separator: " ").dropFirst().first.map(String.init), "\(created)")
                let token = try #require(created.split(separator: "\n").last.map(String.init), "\(created)")
                _ = try await cli(["ping", "--redis-url", acl.url(server, password: password, database: 1)], "ping (database 1: SELECT)")

                let directory = server.directory
                // Apps and their sealed credentials: the API and the worker read them at start and
                // the worker follows their change channel, all as the ACL user.
                let kek = directory.appendingPathComponent("kek")
                try Data(try await cli(["apps", "new-kek"], "apps new-kek").utf8).write(to: kek)
                let operatorToken = directory.appendingPathComponent("operator-token")
                try Data(String(repeating: "t0ken-", count: 8).utf8).write(to: operatorToken)
                _ = try await cli(["apps", "create", "shop", "--kek-file", kek.path] + common, "apps create")
                _ = try await cli(
                    ["apps", "set", "default", "--kek-file", kek.path, "--web-push-subject", "mailto:ops@example.com"] + common, "apps set")
                _ = try await cli(["apps", "check", "--kek-file", kek.path] + common, "apps check")
                _ = try await cli(["apps", "list"] + common, "apps list")
                var processes: [ChildProcess] = []
                do {
                    let api = try await ChildProcess(
                        executable: URL(fileURLWithPath: richpush),
                        arguments: [
                            "api", "--port", "0", "--bcrypt-cost", "4", "--webhook-allow-private", "--log-level", "info",
                            "--durability", "replicated", "--durability-replicas", "1", "--durability-timeout-ms", "10000",
                            "--kek-file", kek.path, "--operator-token-file", operatorToken.path,
                        ] + common, logFile: directory.appendingPathComponent("api.log"))
                    processes.append(api)
                    let worker = try await ChildProcess(
                        executable: URL(fileURLWithPath: richpush),
                        arguments: [
                            "worker", "--consumer", "acl-worker", "--log-level", "warning", "--adapter", "simulated",
                            "--maintenance-interval", "0.2", "--metrics-port", "0", "--queue-metrics-interval", "0.2",
                            "--webhook-retry-base", "0.2", "--webhook-retry-max", "0.5", "--kek-file", kek.path,
                        ] + common, logFile: directory.appendingPathComponent("worker.log"))
                    processes.append(worker)
                    let apiPort = try await Self.listeningPort(api)
                    let client = APIClient(base: URL(string: "http://127.0.0.1:\(apiPort)")!, user: "alice", password: "alice-pw")
                    try await waitUntil(timeout: .seconds(60), "the API to be ready") { try await client.get("health/ready").status == 200 }
                    // The console as the ACL user: a role set by the CLI, sign-in, the overview (the
                    // parked jobs' scripts), a count and the audit log.
                    _ = try await cli(["users", "set-role", "alice", "admin"] + common, "users set-role")
                    _ = try await cli(["apps", "pause", "default"] + common, "apps pause")
                    _ = try await cli(["apps", "resume", "default"] + common, "apps resume")
                    try await ConsoleClient(base: client.base).round(user: "alice", password: "alice-pw")

                    let receiver = WebhookReceiver(secret: Self.secret)
                    receiver.failing.store(true, ordering: .relaxed)
                    let hookPort = PortBox()
                    try await receiver.serve(onPort: { port in hookPort.port.withLock { $0 = port } }) {
                        try await waitUntil(timeout: .seconds(30), "the receiver to listen") { hookPort.port.withLock { $0 } != 0 }
                        let hook = try await client.call(
                            "POST", "api/webhooks",
                            json: [
                                "url": "http://127.0.0.1:\(hookPort.port.withLock { $0 })/hook", "secret": Self.secret,
                                "events": WebhookEventType.allCases.map(\.rawValue),
                            ])
                        #expect(hook.status == 201, "\(hook.json)")
                        let webhook = try #require(hook.json["id"] as? String)

                        // A device that never comes online: the hub holds every push for it.
                        let registration = try await client.call("POST", "api/register")
                        let offline = try #require(
                            registration.text.trimmingCharacters(in: CharacterSet(charactersIn: "\"\n")).nilIfEmpty, "\(registration)")
                        let saved = try await client.call(
                            "PUT", "api/register/\(offline)", json: ["Platform": "apns", "Handle": "acl-offline", "Tags": []])
                        #expect(saved.status == 200 || saved.status == 204, "\(saved.json)")

                        let sim = try await ChildProcess(
                            executable: URL(fileURLWithPath: richpush),
                            arguments: [
                                "device-sim", "--redis-url", url, "--hub-prefix", prefix, "--api", client.base.absoluteString, "--user",
                                "alice",
                                "--devices", "2", "--app-state", "active", "--tap", "more", "--fire-delay", "0", "--format", "json",
                                "--handle-prefix", "acl-phone",
                            ], environment: ["RICHPUSH_PASSWORD": "alice-pw"], logFile: directory.appendingPathComponent("device-sim.log"))
                        processes.append(sim)
                        try await waitUntil(timeout: .seconds(60), "the devices to listen") { sim.log.contains("listening") }
                        func events(_ name: String, _ id: Int) -> [[String: Any]] {
                            NativeProcesses.lines(sim.log).filter {
                                $0["event"] as? String == name && $0["richId"] as? String == String(id)
                            }
                        }
                        func opened(_ id: Int) async throws {
                            try await waitUntil(timeout: .seconds(60), "both devices to open \(id)") {
                                Set(events("opened", id).compactMap { $0["device"] as? Int }).count == 2
                            }
                        }

                        let now = try await client.send(["message": "now", "richType": "text", "payload": "p"])
                        try await opened(now)
                        let sendAt = JobQueue.nowMilliseconds() + 3000
                        let scheduled = try await client.send(["message": "later", "richType": "text", "payload": "p", "sendAt": sendAt])
                        let cancelled = try await client.send([
                            "message": "never", "richType": "text", "payload": "p",
                            "sendAt": JobQueue.nowMilliseconds() + 60_000,
                        ])
                        let cancel = try await client.call("DELETE", "api/notifications/\(cancelled)")
                        #expect(cancel.status == 200 && cancel.json["state"] as? String == "cancelled", "\(cancel.json)")
                        let throttled = try await client.send([
                            "message": "slow", "richType": "text", "payload": "p", "throttlePerMinute": 60,
                        ])
                        let expiring = try await client.send(["message": "brief", "richType": "text", "payload": "p", "ttl": 1])
                        try await opened(scheduled)
                        #expect(
                            events("received", scheduled).allSatisfy { ($0["at"] as? Int ?? 0) >= Int(sendAt) * 1000 },
                            "received before its sendAt")
                        try await opened(throttled)
                        try await opened(expiring)
                        try await waitUntil(timeout: .seconds(60), "the offline device's push of \(expiring) to expire") {
                            (try await client.call("GET", "api/notifications/\(expiring)/status").json["counts"] as? [String: Int])?[
                                "expired"] == 1
                        }
                        let listed = try await client.call("GET", "api/notifications").json["notifications"] as? [[String: Any]] ?? []
                        #expect(listed.count == 5, "\(listed)")
                        let status = try await client.call("GET", "api/notifications/\(now)/status").json
                        #expect((status["counts"] as? [String: Int])?["held"] == 1, "the offline device's push is held: \(status)")
                        #expect(events("received", cancelled).isEmpty)

                        // The receiver refused the first attempts; once it answers, the retries bring every event.
                        try await waitUntil(timeout: .seconds(60), "a failed webhook attempt") {
                            let attempts =
                                try await client.call("GET", "api/webhooks/\(webhook)/attempts").json["attempts"] as? [[String: Any]] ?? []
                            return attempts.contains { $0["outcome"] as? String == "retrying" }
                        }
                        receiver.failing.store(false, ordering: .relaxed)
                        try await waitUntil(timeout: .seconds(60), "the webhook events on a retry") {
                            let seen = Set(receiver.uniqueEvents.values.map { "\($0["notificationId"] ?? "")/\($0["type"] ?? "")" })
                            return seen.isSuperset(of: ["\(now)/sent", "\(now)/opened", "\(throttled)/opened", "\(expiring)/expired"])
                        }
                        #expect(receiver.deliveries.allSatisfy { $0.signatureValid })

                        // An API key works, and stops working at once when revoked (announced on the channel).
                        #expect(try await client.get("api/notifications/\(now)/status", bearer: token).status == 200)
                        _ = try await cli(["keys", "revoke", keyID] + common, "keys revoke")
                        try await waitUntil(timeout: .seconds(30), "the revoked key to be refused") {
                            try await client.get("api/notifications/\(now)/status", bearer: token).status == 401
                        }
                        _ = try await cli(["stats", "--json"] + common, "stats")
                        _ = try await cli(["dlq", "list"] + common, "dlq list")
                        _ = try await cli(["replay", "--from=-15m", "--dry-run"] + common, "replay --dry-run")
                        _ = try await cli(["users", "unlock", "alice", "--address", "10.1.2.3"] + common, "users unlock --address")
                        _ = try await cli(["users", "unlock", "alice"] + common, "users unlock")
                    }
                    // Stopped in the order an operator would: devices, workers, then the API.
                    for process in processes.reversed() {
                        process.signal(SIGTERM)
                        #expect(
                            try await process.wait(timeout: .seconds(30)) == 0,
                            "\(process.logFile.lastPathComponent) did not exit cleanly: \(process.log.suffix(2000))")
                    }
                } catch {
                    for process in processes { process.signal(SIGTERM) }
                    for process in processes { _ = try? await process.wait(timeout: .seconds(30)) }
                    // A denial is the likely cause of what did not happen: say it.
                    if let denials = try? await server.aclLog(), !denials.isEmpty {
                        Issue.record("Redis denied the ACL user: \(Self.describe(denials))")
                    }
                    throw error
                }

                let denials = try await server.aclLog()
                #expect(denials.isEmpty, "Redis denied the ACL user: \(Self.describe(denials))")
                let run = try await server.commandsRun()
                let unused = acl.granted.subtracting(run).subtracting(Self.grantedButNotRunHere.keys)
                #expect(
                    unused.isEmpty,
                    "granted by docs/redis-acl.md but never run: \(unused.sorted()); drop them, or name why in grantedButNotRunHere")
            }
        }
    }

    /// The check can fail: without `+spublish` the hub's publish is refused, and `ACL LOG` names
    /// the command.
    @Test func aCommandLeftOutIsDeniedAndLogged() async throws {
        let acl = try DocumentedACL.load()
        let prefix = try acl.prefix
        let password = UUID().uuidString
        let push = OutgoingPush(
            notification: 1, installation: Installation(id: "i1", platform: .apns, handle: "acl-h", tags: [], owner: "alice", updatedAt: 0),
            rendered: RenderedPush(
                payload: Array(#"{"aps":{"content-available":1},"richId":"1"}"#.utf8), pushType: "background",
                priority: 5, expiration: 0, collapseID: ""))
        try await withRedisServer { server in
            func sendAsTheUser() async throws -> PushOutcome {
                let connection = RedisConnection(configuration: acl.configuration(server, password: password))
                do {
                    let outcome = try await SimulatedHubAdapter(redis: connection, prefix: prefix).send([push])[0]
                    await connection.close()
                    return outcome
                } catch {
                    await connection.close()
                    throw error
                }
            }
            try await acl.apply(on: server, password: password)
            #expect(try await sendAsTheUser() == .held(adapterID: "1:i1"))
            #expect(try await server.aclLog().isEmpty)

            try await acl.apply(on: server, password: password, leftOut: ["+spublish"])
            let refused = try await sendAsTheUser()
            if case .failed(let reason, _) = refused {
                #expect(reason.contains("NOPERM") && reason.contains("spublish"), "\(reason)")
            } else {
                Issue.record("not refused: \(refused)")
            }
            let denials = try await server.aclLog()
            #expect(
                denials.contains {
                    $0["reason"] == "command" && $0["context"] == "toplevel" && $0["object"] == "spublish" && $0["username"] == acl.user
                },
                "\(denials)")
        }
    }

    /// ACL LOG entries, one line each: why, where (toplevel, multi, lua), what, who.
    static func describe(_ denials: [[String: String]]) -> String {
        denials.map { "\($0["reason"] ?? "?") \($0["context"] ?? "?") \($0["object"] ?? "?") (\($0["username"] ?? "?"))" }.joined(
            separator: "; ")
    }

    /// A replica of `server`, connected and in sync, while `body` runs (for `--durability replicated`).
    static func withReplica(of server: RedisServer, _ body: () async throws -> Void) async throws {
        let replica = try await RedisServer(arguments: ["--replicaof", "127.0.0.1", String(server.port)])
        do {
            try await waitUntil(timeout: .seconds(30), "the replica to be in sync") {
                (try await server.probe(RedisCommand("INFO", "replication")).string ?? "").contains("state=online")
            }
            try await body()
        } catch {
            await replica.shutdownGently()
            throw error
        }
        await replica.shutdownGently()
    }

    /// The port `richpush api --port 0` listens on, from its log.
    static func listeningPort(_ api: ChildProcess) async throws -> Int {
        var port: Int?
        try await waitUntil(timeout: .seconds(60), "the API to listen") {
            let log = api.log
            guard let range = log.range(of: "listening on 127.0.0.1:") else { return false }
            port = Int(log[range.upperBound...].prefix { $0.isNumber })
            return port != nil
        }
        return try #require(port)
    }
}

/// Where the webhook receiver says which port it got.
private final class PortBox: Sendable {
    let port = Mutex(0)
}

/// The API over HTTP as one user (Basic), or with an API key (Bearer).
private struct APIClient {
    let base: URL
    let user: String
    let password: String

    struct Answer {
        let status: Int
        let data: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: data, as: UTF8.self) }
    }

    func call(_ method: String, _ path: String, json: [String: Any]? = nil, bearer: String? = nil) async throws -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue(
            bearer.map { "Bearer \($0)" } ?? "Basic " + Data("\(user):\(password)".utf8).base64EncodedString(),
            forHTTPHeaderField: "Authorization")
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, data: data)
    }

    func get(_ path: String, bearer: String? = nil) async throws -> Answer {
        try await call("GET", path, bearer: bearer)
    }

    /// POSTs a notification; its id.
    func send(_ json: [String: Any]) async throws -> Int {
        let answer = try await call("POST", "api/notifications", json: json)
        guard answer.status == 202, let id = (answer.json["id"] as? String).flatMap(Int.init) else {
            throw RedisServerError("send failed (\(answer.status)): \(answer.text)")
        }
        return id
    }
}

private extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// The console over HTTP, its session cookie carried by hand.
private struct ConsoleClient {
    let base: URL

    func round(user: String, password: String) async throws {
        let signIn = try await call("POST", "console/login", form: "user=\(user)&password=\(password)", cookie: nil)
        #expect(signIn.status == 200, "console sign-in: \(signIn.body)")
        let cookie = try #require(signIn.cookie, "the session cookie")
        let overview = try await call("GET", "console/overview.json", cookie: cookie)
        #expect(overview.status == 200, "console overview: \(overview.body)")
        let count = try await call("POST", "console/dead-letters/count", form: "app=default", cookie: cookie)
        #expect(count.status == 200, "console count: \(count.body)")
        // The queues page (the delayed set's slices), a cancel count, and an app paused and resumed (the pause scripts).
        let queues = try await call("GET", "console/queues", cookie: cookie)
        #expect(queues.status == 200, "console queues: \(queues.body)")
        let cancelCount = try await call("POST", "console/queues/count", form: "kind=scheduled", cookie: cookie)
        #expect(cancelCount.status == 200, "console cancel count: \(cancelCount.body)")
        for action in ["pause", "resume"] {
            let changed = try await call("POST", "console/queues/\(action)", form: "app=default", cookie: cookie)
            #expect(changed.status == 200 && changed.body.contains("\"changed\":true"), "console \(action): \(changed.body)")
        }
        let audit = try await call("GET", "console/audit", cookie: cookie)
        #expect(audit.status == 200 && audit.body.contains("sign-in"), "console audit: \(audit.body)")
        let out = try await call("POST", "console/logout", form: "", cookie: cookie)
        #expect(out.status == 200, "console sign-out: \(out.body)")
    }

    func call(
        _ method: String, _ path: String, form: String? = nil, cookie: String?
    ) async throws -> (status: Int, body: String, cookie: String?) {
        try await ConsoleHTTP.call(base, method, path, form: form, cookie: cookie)
    }
}
