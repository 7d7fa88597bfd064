import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// Status webhooks: `POST/GET /api/webhooks`, `GET/DELETE /api/webhooks/{id}`, its attempts, its
/// dead letters and their replay. A user sees and manages their own; an admin everyone's, and
/// only an admin may create one with `allUsers`.
struct WebhookRoutes {
    let webhooks: any WebhookStore
    let allowPrivate: Bool

    static let fields = ["url", "events", "secret", "description", "allUsers"]
    static let maxBodyBytes = 16 * 1024
    static let maxDescription = 200
    static let secretLength = 16...256

    /// Adds the routes; each request runs on its app's routes (built once per app).
    static func add(to group: RouterGroup<APIRequestContext>, for routes: RoutesPerApp<Self>) {
        group.post("webhooks") { try await routes($1).create($0, context: $1) }
        group.get("webhooks") { try await routes($1).list($0, context: $1) }
        group.get("webhooks/:id") { try await routes($1).show($0, context: $1) }
        group.delete("webhooks/:id") { try await routes($1).delete($0, context: $1) }
        group.get("webhooks/:id/attempts") { try await routes($1).attempts($0, context: $1) }
        group.get("webhooks/:id/dead-letters") { try await routes($1).deadLetters($0, context: $1) }
        group.post("webhooks/:id/dead-letters/replay") { try await routes($1).replay($0, context: $1) }
    }

    @Sendable func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.admin)
        let body = try await request.body.collect(upTo: Self.maxBodyBytes)
        let object = try JSONObjectBody.members(
            body, allowed: Self.fields, shape: "{\"url\", \"events\", \"secret\", \"description\", \"allUsers\"}")
        guard let url = object["url"]?.string else { throw APIError.badRequest("'url' (a string) is required", code: "missing_field") }
        if let problem = WebhookURL.problem(with: url, allowPrivate: allowPrivate) { throw APIError.badRequest(problem, code: "bad_url") }
        let events = try Self.events(object["events"])
        let generated = object["secret"] == nil
        let secret = try object["secret"].map(Self.secret) ?? Self.newSecret()
        let description = try object["description"].map(Self.description) ?? ""
        let allUsers = try object["allUsers"].map(Self.boolean) ?? false
        if allUsers, user.role != .admin { throw APIError.forbidden("only admins may create a webhook for all users' notifications") }
        let webhook = Webhook(
            id: Self.newID(), owner: user.name, url: url, events: events, allUsers: allUsers, description: description,
            secret: secret, createdAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
        guard try await webhooks.create(webhook) else {
            throw APIError.unprocessable(
                "you have \(Webhook.maxPerUser) webhooks, the most one user may have; delete one first", code: "webhook_limit")
        }
        context.logger.info("webhook created", metadata: ["webhook.id": "\(webhook.id)", "webhook.owner": "\(user.name)"])
        // The secret is shown once, here (whether it was sent or generated).
        var view = WebhookView(webhook)
        view.secret = secret
        view.secretGenerated = generated
        return try JSONResponse.encode(view, status: .created, headers: [.location: "/api/webhooks/\(webhook.id)"])
    }

    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        let all = try await webhooks.webhooks(owner: user.role == .admin ? nil : user.name)
        return try JSONResponse.encode(["webhooks": all.map(WebhookView.init)], status: .ok)
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        let webhook = try await visible(context, scope: .read)
        return try JSONResponse.encode(WebhookView(webhook), status: .ok)
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let webhook = try await visible(context, scope: .admin)
        guard try await webhooks.delete(id: webhook.id) else { throw APIError.notFound("no webhook \(webhook.id)") }
        return Response(status: .noContent)
    }

    @Sendable func attempts(_ request: Request, context: APIRequestContext) async throws -> Response {
        let webhook = try await visible(context, scope: .read)
        let limit = try Self.limit(request, default: 100)
        return try JSONResponse.encode(["attempts": try await webhooks.attempts(webhook: webhook.id, limit: limit)], status: .ok)
    }

    @Sendable func deadLetters(_ request: Request, context: APIRequestContext) async throws -> Response {
        let webhook = try await visible(context, scope: .read)
        let limit = try Self.limit(request, default: 20)
        return try JSONResponse.encode(["deadLetters": try await webhooks.deadLetters(webhook: webhook.id, limit: limit)], status: .ok)
    }

    @Sendable func replay(_ request: Request, context: APIRequestContext) async throws -> Response {
        let webhook = try await visible(context, scope: .admin)
        let count = try await webhooks.replayDeadLetters(webhook: webhook.id)
        return try JSONResponse.encode(["replayed": count], status: .accepted)
    }

    /// The webhook of the path, if the caller may see it (its owner or an admin); 404 otherwise,
    /// so ids of other users' webhooks are not confirmed.
    private func visible(_ context: APIRequestContext, scope: APIKey.Scope) async throws -> Webhook {
        let user = try context.caller(scope)
        let id = context.parameters.get("id") ?? ""
        guard Webhook.isValidID(id), let webhook = try await webhooks.webhook(id: id), webhook.owner == user.name || user.role == .admin
        else {
            throw APIError.notFound("no webhook \(id.prefix(40))")
        }
        return webhook
    }

    static func events(_ value: JSONValue?) throws -> Set<WebhookEventType> {
        let known = WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .array(let names)? = value, !names.isEmpty, names.count <= 2 * WebhookEventType.allCases.count else {
            throw APIError.badRequest("'events' must be a non-empty array of event names: \(known)", code: "bad_events")
        }
        var events = Set<WebhookEventType>()
        for name in names {
            guard let text = name.string, let event = WebhookEventType(rawValue: text) else {
                throw APIError.badRequest(
                    "unknown event \(name.string.map { "'\($0.prefix(40))'" } ?? "(not a string)"); known: \(known)", code: "unknown_event")
            }
            events.insert(event)
        }
        return events
    }

    /// A JSON `true` or `false` (not 1 or 0).
    static func boolean(_ value: JSONValue) throws -> Bool {
        guard case .bool(let flag) = value else {
            throw APIError.badRequest("'allUsers' must be true or false", code: "wrong_type")
        }
        return flag
    }

    static func secret(_ value: JSONValue) throws -> String {
        guard let secret = value.string, secretLength.contains(secret.utf8.count), secret.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw APIError.badRequest(
                "'secret' must be \(secretLength.lowerBound) to \(secretLength.upperBound) printable ASCII characters without spaces",
                code: "bad_secret")
        }
        return secret
    }

    static func description(_ value: JSONValue) throws -> String {
        guard let text = value.string, text.count <= maxDescription else {
            throw APIError.badRequest("'description' must be a string of at most \(maxDescription) characters", code: "bad_description")
        }
        return text
    }

    static func limit(_ request: Request, default value: Int) throws -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return value }
        guard let limit = Int(text), (1...100).contains(limit) else {
            throw APIError.badRequest("'limit' must be 1 to 100", code: "bad_limit")
        }
        return limit
    }

    static func newID() -> String {
        "wh_" + Hex.encode(withUnsafeBytes(of: UInt64.random(in: .min ... .max).bigEndian) { Array($0) })
    }

    /// `whsec_` and 32 random bytes, base64url.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return "whsec_" + Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// A webhook as the API shows it: never its secret, except in the answer that created it.
struct WebhookView: Encodable {
    let id: String
    let url: String
    let events: [String]
    let allUsers: Bool
    let description: String
    let owner: String
    let createdAt: String
    var secret: String?
    var secretGenerated: Bool?

    init(_ webhook: Webhook) {
        id = webhook.id
        url = webhook.url
        events = webhook.events.sorted().map(\.rawValue)
        allUsers = webhook.allUsers
        description = webhook.description
        owner = webhook.owner
        createdAt = UTCTimestamp.iso8601(milliseconds: webhook.createdAt)
    }
}
