import Foundation
package import Hummingbird
import NIOCore
package import NIOSSL
package import RichPushCore
package import RichPushSimTLS
import Synchronization

/// The local FCM: Google's OAuth2 token endpoint (`POST /token`) and FCM HTTP v1's
/// `POST /v1/projects/{project}/messages:send`, checked as Google checks them
/// (``FCMAssertionCheck``, ``FCMMessageRules``), answering with Google's JSON errors, with
/// FCM's send limits (``FCMQuota``: 429 `QUOTA_EXCEEDED` past the project's rolling minute or a
/// device's 240 a minute) and faults on demand: dead registration tokens (404 `UNREGISTERED`, fixed
/// per token by the seed) and transient 429 `QUOTA_EXCEEDED`, 500 `INTERNAL`, 503 `UNAVAILABLE`.
package final class FCMSimulator: Sendable {
    package struct Configuration: Sendable {
        package var projectID: String
        package var check: FCMAssertionCheck
        /// `expires_in` of the access tokens it issues.
        package var tokenLifetime: Duration = .seconds(3600)
        /// The share of registration tokens that are dead (404 `UNREGISTERED`).
        package var unregistered: Double = 0
        /// Transient failures: HTTP status (400, 429, 500, 503) and share of requests.
        package var transient: [(status: Int, share: Double)] = []
        /// Each answer held back this many milliseconds (drawn per request), or not at all.
        package var delayMilliseconds: ClosedRange<Int>?
        package var seed: UInt64 = 1
        /// The project's and each device's send limits.
        package var quota = FCMQuota.Limits()
        /// The project's quota used up mid-run (429 `QUOTA_EXCEEDED` with `Retry-After`), once.
        package var outage: SimulatedOutage?

        package init(projectID: String, check: FCMAssertionCheck) {
            self.projectID = projectID
            self.check = check
        }
    }

    let configuration: Configuration
    private let quota: FCMQuota
    private let tokens = Mutex<[String: Date]>([:])
    private let random: SimulationRandom
    private let sequence = Atomic<Int>(0)
    private let issued = Atomic<Int>(0)

    /// Access tokens issued so far (a fleet should need one per expiry period).
    package var tokensIssued: Int { issued.load(ordering: .relaxed) }
    /// One JSON line per request.
    package typealias RequestLog = @Sendable (String) -> Void
    let log: RequestLog?
    let forward: (@Sendable (Accepted) -> Void)?

    package init(configuration: Configuration, log: RequestLog? = nil, forward: (@Sendable (Accepted) -> Void)? = nil) {
        self.configuration = configuration
        self.random = SimulationRandom(seed: configuration.seed)
        quota = FCMQuota(limits: configuration.quota)
        self.log = log
        self.forward = forward
    }

    /// Forgets every access token it issued: the next request with one gets 401, as after expiry.
    package func revokeTokens() {
        tokens.withLock { $0.removeAll() }
    }

    /// Serves Google's endpoints as they are served: HTTP/2 over TLS (`tls` offering `h2`), at
    /// most `maxStreams` streams per connection, on raw HTTP/2 frames.
    package func start(host: String = "127.0.0.1", port: Int, tls: TLSConfiguration, maxStreams: Int = 100) async throws -> LocalHTTP2Server
    {
        try await LocalHTTP2Server.start(
            host: host, port: port, tls: tls, maxStreams: maxStreams, maxBodyBytes: FCMMessageRules.maxBodyBytes
        ) { request in
            self.respond(to: request)
        }
    }

    /// The same endpoints over cleartext HTTP/1.1, for curl and debugging (the workers' FCM
    /// client speaks HTTP/2 over TLS only, as Google does).
    package func application(
        host: String = "127.0.0.1", port: Int, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    )
        -> some ApplicationProtocol
    {
        let router = Router()
        router.post("**") { request, _ -> Response in
            let body = try await request.body.collect(upTo: FCMMessageRules.maxBodyBytes + 1)
            let answer = self.respond(
                to: LocalHTTP2Server.Request(
                    method: "POST", path: request.uri.path,
                    headers: request.headers.map { (name: $0.name.canonicalName, value: $0.value) }, body: Array(buffer: body)))
            var headers = HTTPFields()
            for header in answer.headers {
                switch header.name {
                case "content-type": headers[.contentType] = header.value
                case "retry-after": headers[.retryAfter] = header.value
                case "www-authenticate": headers[.wwwAuthenticate] = header.value
                default: break
                }
            }
            return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "fcm-sim"),
            onServerRunning: onServerRunning)
    }

    /// Google's answer to one request: the token endpoint (`POST /token`) or FCM's
    /// `POST /v1/projects/{project}/messages:send`.
    package func respond(to request: LocalHTTP2Server.Request) -> LocalHTTP2Server.Response {
        var response = answer(request)
        if let range = configuration.delayMilliseconds {
            response.delay = .milliseconds(range.lowerBound + Int(random.next() * Double(range.count - 1) + 0.5))
        }
        return response
    }

    private func answer(_ request: LocalHTTP2Server.Request) -> LocalHTTP2Server.Response {
        guard request.method == "POST" else {
            return Self.json(405, ["error": ["code": 405, "message": "Method Not Allowed", "status": "UNIMPLEMENTED"]])
        }
        if request.path == "/token" { return token(form: String(decoding: request.body, as: UTF8.self)) }
        let prefix = "/v1/projects/", suffix = "/messages:send"
        if request.path.hasPrefix(prefix), request.path.hasSuffix(suffix), request.path.count > prefix.count + suffix.count {
            let project = String(request.path.dropFirst(prefix.count).dropLast(suffix.count))
            guard request.body.count <= FCMMessageRules.maxBodyBytes else {
                return answer(
                    FCMSimError(400, "INVALID_ARGUMENT", "Request payload size exceeds the limit", fcm: "INVALID_ARGUMENT"), token: nil)
            }
            return send(project: project, authorization: request.header("authorization"), body: request.body)
        }
        return Self.json(
            404,
            ["error": ["code": 404, "message": "The requested URL \(request.path) was not found on this server.", "status": "NOT_FOUND"]])
    }

    func token(form: String) -> LocalHTTP2Server.Response {
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return Self.json(
                400, ["error": "unsupported_grant_type", "error_description": "Invalid grant_type: \(fields["grant_type"] ?? "")"])
        }
        if let problem = configuration.check.problem(with: fields["assertion"] ?? "", now: Date()) {
            return Self.json(400, ["error": "invalid_grant", "error_description": problem])
        }
        let token = "ya29.sim-" + Hex.encode((0..<24).map { _ in UInt8.random(in: 0...255) })
        let lifetime = Double(configuration.tokenLifetime.components.seconds)
        tokens.withLock { $0[token] = Date().addingTimeInterval(lifetime) }
        issued.add(1, ordering: .relaxed)
        log?(Self.logLine(token: nil, status: 200, error: nil, issued: String(token.prefix(16))))
        return Self.json(200, ["access_token": token, "expires_in": Int(lifetime), "token_type": "Bearer"])
    }

    func send(project: String, authorization: String?, body: [UInt8]) -> LocalHTTP2Server.Response {
        let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, let expiry = tokens.withLock({ $0[bearer] }), expiry > Date() else {
            return answer(
                FCMSimError(
                    401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.", fcm: nil),
                token: nil, wwwAuthenticate: #"Bearer realm="https://accounts.google.com/", error="invalid_token""#)
        }
        guard project == configuration.projectID else {
            return answer(
                FCMSimError(
                    403, "PERMISSION_DENIED",
                    "Permission 'cloudmessaging.messages.create' denied on resource '//fcm.googleapis.com/projects/\(project)'",
                    fcm: "SENDER_ID_MISMATCH"), token: nil)
        }
        let token: String
        let validateOnly: Bool
        switch FCMMessageRules.check(body) {
        case .failure(let error): return answer(error, token: nil)
        case .success(let checked): (token, validateOnly) = checked
        }
        let now = Date().timeIntervalSince1970
        if let left = configuration.outage?.refusal(now: now) {
            return answer(Self.projectQuotaExceeded(project), token: token, retryAfter: String(left))
        }
        switch quota.admit(token: token, now: now) {
        case .project(let wait)?:
            return answer(Self.projectQuotaExceeded(project), token: token, retryAfter: String(wait))
        case .device(let wait)?:
            return answer(
                FCMSimError(
                    429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Messages' and limit 'Messages per minute'.",
                    fcm: "QUOTA_EXCEEDED",
                    quotaViolation: ("device:\(token.prefix(12))", "Device message rate exceeded.")),
                token: token, retryAfter: String(wait))
        case nil:
            break
        }
        if SimulationRandom.stableUnit(of: token, seed: configuration.seed) < configuration.unregistered {
            return answer(FCMSimError(404, "NOT_FOUND", "Requested entity was not found.", fcm: "UNREGISTERED"), token: token)
        }
        var threshold = 0.0
        let draw = random.next()
        for (status, share) in configuration.transient {
            threshold += share
            guard draw < threshold else { continue }
            switch status {
            case 400:
                return answer(
                    FCMSimError(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", fcm: "INVALID_ARGUMENT"), token: token)
            case 429:
                return answer(
                    FCMSimError(
                        429, "RESOURCE_EXHAUSTED", "Quota exceeded.", fcm: "QUOTA_EXCEEDED",
                        quotaViolation: ("project:\(project)", "Project message rate exceeded.")), token: token, retryAfter: "1")
            case 500: return answer(FCMSimError(500, "INTERNAL", "Internal error encountered.", fcm: "INTERNAL"), token: token)
            default:
                return answer(FCMSimError(503, "UNAVAILABLE", "The service is currently unavailable.", fcm: "UNAVAILABLE"), token: token)
            }
        }
        let name = "projects/\(project)/messages/\(validateOnly ? "fake_message_id" : "0:\(sequence.add(1, ordering: .relaxed).newValue)")"
        if !validateOnly { forward?(Accepted(token: token, body: body, name: name)) }
        log?(Self.logLine(token: token, status: 200, error: nil))
        // The one answer on the hot path, written directly (a name is [a-z0-9/:_-]).
        return LocalHTTP2Server.Response(
            status: 200, headers: [(name: "content-type", value: "application/json; charset=UTF-8")],
            body: Array("{\"name\":\"\(name)\"}".utf8))
    }

    static func projectQuotaExceeded(_ project: String) -> FCMSimError {
        FCMSimError(
            429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Messages' and limit 'Messages per minute'.", fcm: "QUOTA_EXCEEDED",
            quotaViolation: ("project:\(project)", "Project message rate exceeded."))
    }

    private func answer(
        _ error: FCMSimError, token: String?, retryAfter: String? = nil, wwwAuthenticate: String? = nil
    ) -> LocalHTTP2Server.Response {
        log?(Self.logLine(token: token, status: error.status, error: error.fcm ?? error.rpcStatus))
        var headers = [(name: "content-type", value: "application/json; charset=UTF-8")]
        if let retryAfter { headers.append((name: "retry-after", value: retryAfter)) }
        if let wwwAuthenticate { headers.append((name: "www-authenticate", value: wwwAuthenticate)) }
        return LocalHTTP2Server.Response(status: error.status, headers: headers, body: error.body)
    }

    static func json(_ status: Int, _ object: [String: Any]) -> LocalHTTP2Server.Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return LocalHTTP2Server.Response(
            status: status, headers: [(name: "content-type", value: "application/json; charset=UTF-8")], body: Array(data))
    }

    static func logLine(token: String?, status: Int, error: String?, issued: String? = nil) -> String {
        var object: [String: Any] = [
            "token": token ?? NSNull(), "status": status, "error": error ?? NSNull(), "at": Date().timeIntervalSince1970,
        ]
        // A token endpoint line: the access token issued (its first characters).
        if let issued { object["issued"] = issued }
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}
