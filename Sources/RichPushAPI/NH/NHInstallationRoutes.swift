import Hummingbird
import RichPushCore
import RichPushNH
import RichPushQueue

/// Notification Hubs' installations, `/{hub}/installations/{id}`, on the app's installations:
/// `PUT` creates or replaces one (200), `GET` reads it (200, JSON; 404), `PATCH` applies a JSON
/// Patch (``NHInstallationPatch``; 200), `DELETE` removes it (204, also when there was none). A
/// key with the `Listen` right suffices, as in NH, where a device registers itself.
struct NHInstallationRoutes {
    let access: NHHubAccess
    /// The app's installations.
    let installations: @Sendable (AppID) -> any InstallationStore
    /// What one user's installations may hold (an installation with a `userId` is that user's).
    let quotas: APIConfiguration.Quotas

    /// An installation document nests no deeper than a template's headers.
    static let maxDepth = 6

    func add(to router: Router<APIRequestContext>) {
        router.put(":hub/installations/:id") { try await put($0, context: $1) }
        router.get(":hub/installations/:id") { try await get($0, context: $1) }
        router.patch(":hub/installations/:id") { try await patch($0, context: $1) }
        router.delete(":hub/installations/:id") { try await delete($0, context: $1) }
    }

    func put(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try Self.installationID(context)
        let document = try await Self.json(request, what: "an installation, a JSON object")
        try await save(try NHInstallationDocument.installation(document, id: id, updatedAt: JobQueue.nowMilliseconds()), in: app)
        return Response(status: .ok)
    }

    func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try Self.installationID(context)
        guard let installation = try await installations(app).installation(id: id) else { throw Self.notFound }
        var json = JSONWriter(capacity: 512)
        json.value(NHInstallationDocument.document(installation))
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.bytes)))
    }

    func patch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try Self.installationID(context)
        // JSON either way: NH's JS SDK sends `application/json`, the .NET SDK `application/json-patch+json`.
        let patch = try NHInstallationPatch(try await Self.json(request, what: "a JSON Patch, an array of {\"op\", \"path\", \"value\"}"))
        guard let installation = try await installations(app).installation(id: id) else { throw Self.notFound }
        let document = try patch.applied(to: NHInstallationDocument.document(installation))
        try await save(try NHInstallationDocument.installation(document, id: id, updatedAt: JobQueue.nowMilliseconds()), in: app)
        return Response(status: .ok)
    }

    func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try Self.installationID(context)
        let store = installations(app)
        if let installation = try await store.installation(id: id) { _ = try await store.remove(installation) }
        return Response(status: .noContent)
    }

    /// Saves `installation` as NH's `PUT` does, replacing whatever the id held: a device whose
    /// `userId` changed moves to the new user. The hub's own installations have no limits; a
    /// user's count against that user's quotas.
    func save(_ installation: Installation, in app: AppID) async throws {
        let store = installations(app)
        let limits =
            installation.owner == NHInstallationDocument.hubOwner
            ? RegistrationLimits() : RegistrationLimits(registrations: quotas.registrations, tags: quotas.tags)
        var outcome = try await store.save(installation, limits: limits)
        if outcome == .ownedByAnotherUser, let previous = try await store.installation(id: installation.id) {
            _ = try await store.remove(previous)
            outcome = try await store.save(installation, limits: limits)
        }
        switch outcome {
        case .created, .updated:
            return
        case .ownedByAnotherUser:
            throw NHError(status: 409, code: "Conflict", message: "installation \(installation.id) changed while it was written; try again")
        case .handleTaken:
            throw NHError(
                status: 409, code: "Conflict",
                message: "this pushChannel belongs to an installation of another user; delete that installation first")
        case .tooManyRegistrations:
            throw NHError(
                status: 403, code: "QuotaExceeded",
                message: "user \(installation.owner) may own \(quotas.registrations) installations; delete one first")
        case .tooManyTags:
            throw NHError(
                status: 403, code: "QuotaExceeded",
                message: "user \(installation.owner)'s installations may carry \(quotas.tags) distinct tags")
        }
    }

    static let notFound = NHError(status: 404, code: "InstallationNotFound", message: "Installation not found.")

    /// The body as JSON (the listener bounds its bytes), nested no deeper than ``maxDepth``.
    private static func json(_ request: Request, what: String) async throws -> JSONValue {
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let document = JSONValue.parse(Array(buffer: body), maxDepth: maxDepth) else {
            throw NHError.badRequest("the body must be \(what), nested at most \(maxDepth) levels")
        }
        return document
    }

    /// The path's installation id: 1 to 64 letters, digits, `.`, `-` or `_` (NH's entity segments).
    static func installationID(_ context: APIRequestContext) throws -> String {
        guard let id = context.parameters.get("id"), NHInstallationID.isValid(id) else {
            throw NHError.badRequest(NHInstallationID.rule)
        }
        return id
    }
}
