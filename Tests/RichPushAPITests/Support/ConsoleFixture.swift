import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushQueue
import RichPushStorage

/// The console over ``APIFixture``: console roles for the test users (root admin, alice
/// operator, bob viewer), sign-in that returns the session cookie, forms, and dead letters
/// written as the dead-letter script writes them.
struct ConsoleFixture {
    var api: APIFixture
    /// The live test client's requests say `Host: localhost`: the console's own origin.
    static let origin = "http://localhost"
    static let browser: HTTPFields = [.origin: origin, .accept: "text/html", .contentType: "application/x-www-form-urlencoded"]
    static let script: HTTPFields = [.origin: origin, .accept: "application/json", .contentType: "application/x-www-form-urlencoded"]

    init(server: RedisServer, configure: (inout APIConfiguration) -> Void = { _ in }) async throws {
        api = try await APIFixture(server: server, configure: configure)
        let users = RedisUserStore(redis: api.redis, keys: api.keys)
        for (name, role) in [("root", ConsoleAccess.Role.admin), ("alice", .operator), ("bob", .viewer)] {
            _ = try await users.setConsoleAccess(name: name, ConsoleAccess(role: role))
        }
    }

    var deadQueue: JobQueue { api.jobQueue }

    /// Adds a dead letter of `app` dying with `error`; its id in the dead letters. Its job's
    /// origin (what a replay keeps) is `origin:<that id>`.
    @discardableResult
    func addDeadLetter(app: String, error: String, type: String = "probe", payload: String = "{}") async throws -> String {
        try await addDeadLetters(1, app: app, error: error, type: type, payload: payload)
    }

    /// Adds `count` dead letters as ``addDeadLetter(app:error:type:payload:)`` does, in one
    /// script call; the id of the last.
    @discardableResult
    func addDeadLetters(_ count: Int, app: String, error: String, type: String = "probe", payload: String = "{}") async throws -> String {
        // The ids are chosen here (as XADD * would: the time, then a sequence) so each origin can name its id.
        try await api.redis.run(
            Self.addScript, keys: [api.queue.deadKey], arguments: [count, type, payload, app, error, JobQueue.nowMilliseconds()]
        ).string ?? ""
    }

    static let addScript = RedisScript(
        """
        local id
        for i = 1, tonumber(ARGV[1]) do
          local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
          local t = redis.call('TIME')
          local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
          local seq = 0
          if last[1] then
            local lms, lseq = string.match(last[1][1], '(%d+)-(%d+)')
            if tonumber(lms) >= ms then ms = tonumber(lms); seq = tonumber(lseq) + 1 end
          end
          id = ms .. '-' .. seq
          redis.call('XADD', KEYS[1], id, 'v', '1', 'type', ARGV[2], 'payload', ARGV[3], 'enq', ARGV[6], 'app', ARGV[4], 'lane', 'now',
            'origin', 'origin:' .. id, 'err', ARGV[5], 'deadAt', ARGV[6])
        end
        return id
        """)

    /// The ids of the dead letters left.
    func deadLetterIDs() async throws -> [String] {
        (try await api.redis.send("XRANGE", api.queue.deadKey, "-", "+").array ?? []).compactMap { $0.array?.first?.string }
    }

    /// The dead-letter ids whose jobs are in the stream (a replayed job keeps its origin).
    /// The origins of the jobs in the queue: a replay admits them into their app's lanes (fair
    /// scheduling), so a take moves them into the stream first, as a worker's would.
    func replayedOrigins() async throws -> [String] {
        try await api.jobQueue.ensureGroup()
        _ = try await api.jobQueue.take(for: "test-reader", count: 10_000)
        return (try await api.redis.send("XRANGE", api.queue.streamKey, "-", "+").array ?? []).compactMap { entry in
            let flat = entry.array?.last?.array ?? []
            return stride(from: 0, to: flat.count - 1, by: 2).first { flat[$0].string == "origin" }.flatMap { flat[$0 + 1].string }.map {
                String($0.dropFirst("origin:".count))
            }
        }
    }

    static func form(_ pairs: [(String, String)]) -> ByteBuffer {
        ByteBuffer(string: pairs.map { "\(percent($0.0))=\(percent($0.1))" }.joined(separator: "&"))
    }

    static func percent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

extension TestClientProtocol {
    /// Signs in to the console; the `Cookie` header that carries the session.
    func consoleSignIn(_ user: String, password: String? = nil) async throws -> HTTPFields {
        let response = try await execute(
            uri: "/console/login", method: .post, headers: ConsoleFixture.script,
            body: ConsoleFixture.form([("user", user), ("password", password ?? "\(user)-pw")]))
        guard response.status == .ok, let cookie = response.headers[.setCookie], let pair = cookie.split(separator: ";").first else {
            throw TestAPIError("console sign-in of \(user) failed: \(response.status) \(String(buffer: response.body))")
        }
        return [.cookie: String(pair)]
    }

    /// A console form posted as a browser on the console's page would (Origin, Accept: JSON).
    func consolePost(
        _ path: String, session: HTTPFields, _ pairs: [(String, String)], headers: HTTPFields = ConsoleFixture.script
    ) async throws -> TestResponse {
        try await execute(uri: path, method: .post, headers: headers + session, body: ConsoleFixture.form(pairs))
    }

    func consoleGet(_ path: String, session: HTTPFields, html: Bool = false) async throws -> TestResponse {
        try await execute(uri: path, method: .get, headers: session + [.accept: html ? "text/html" : "application/json"])
    }
}
