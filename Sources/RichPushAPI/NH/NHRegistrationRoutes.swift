import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore
import RichPushNH
import RichPushQueue

/// Notification Hubs' registrations (Atom XML, ``NHRegistrationDescription``) on the app's
/// installations: `POST /{hub}/registrationIDs` gives a new id (201, `Location`), `PUT
/// /{hub}/registrations/{id}` creates or updates one (200, the entry; `If-Match` when given must
/// be `*` or its ETag, else 412), `POST /{hub}/registrations` creates one with a new id, `GET`
/// reads one (200; 404), `DELETE` removes one (200; 404; `If-Match` as for `PUT`). With the
/// `Listen` right, as in NH; listing them (`GET /{hub}/registrations`, `GET
/// /{hub}/tags/{tag}/registrations`, `$top` up to 100, NH's continuation token) needs `Manage`.
struct NHRegistrationRoutes {
    let access: NHHubAccess
    let installations: NHInstallationRoutes

    static let entryType = "application/atom+xml;type=entry;charset=utf-8"
    static let feedType = "application/atom+xml;type=feed;charset=utf-8"
    static let continuationHeader = HTTPField.Name("x-ms-continuationtoken")!

    func add(to router: Router<APIRequestContext>) {
        router.post(":hub/registrationIDs") { try await newID($0, context: $1) }
        router.post(":hub/registrations") { try await create($0, context: $1) }
        router.put(":hub/registrations/:id") { try await put($0, context: $1) }
        router.get(":hub/registrations/:id") { try await get($0, context: $1) }
        router.delete(":hub/registrations/:id") { try await delete($0, context: $1) }
        router.get(":hub/registrations") { try await list($0, context: $1, tag: nil) }
        router.get(":hub/tags/:tag/registrations") { try await list($0, context: $1, tag: tagParameter($1)) }
    }

    func newID(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = Self.newRegistrationID()
        let host = request.head.authority ?? "localhost"
        // The .NET SDK reads the id from `…/registrationids/{id}`, the JS SDK from the fourth segment.
        return Response(
            status: .created,
            headers: [
                .location: "https://\(host)/\(app.rawValue)/registrationids/\(id)?api-version=2015-01",
                .contentLocation: "https://\(host)/\(app.rawValue)/registrations/\(id)?api-version=2015-01",
            ])
    }

    func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        return try await save(request, id: Self.newRegistrationID(), app: app, ifMatch: nil)
    }

    func put(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try NHInstallationRoutes.installationID(context)
        return try await save(request, id: id, app: app, ifMatch: request.headers[.ifMatch])
    }

    func get(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try NHInstallationRoutes.installationID(context)
        guard let installation = try await installations.installations(app).installation(id: id),
            let kind = NHRegistrationDescription.kind(of: installation)
        else { throw Self.notFound }
        return Self.answer(Self.document(entry: installation, kind: kind, request: request, app: app), type: Self.entryType)
    }

    func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .listen)
        let id = try NHInstallationRoutes.installationID(context)
        let store = installations.installations(app)
        guard let installation = try await store.installation(id: id) else { throw Self.notFound }
        guard NHRegistrationDescription.matches(request.headers[.ifMatch], installation) else { throw Self.changed }
        _ = try await store.remove(installation)
        return Response(status: .ok)
    }

    func list(_ request: Request, context: APIRequestContext, tag: String?) async throws -> Response {
        let (app, _) = try await access.authorize(request, context: context, needs: .manage)
        let query = request.uri.queryParameters
        if let filter = query["$filter"] {
            guard tag == nil else { throw NHError.badRequest("$filter lists all registrations, not a tag's") }
            return try await channel(String(filter), request: request, app: app)
        }
        var top = 100
        if let text = query["$top"] {
            guard let value = Int(text), (1...100).contains(value) else { throw NHError.badRequest("$top is 1 to 100") }
            top = value
        }
        // NH's continuation token, named in any case (the SDKs send `continuationtoken`).
        let token = query.first { $0.key.lowercased() == "continuationtoken" }.map { String($0.value) }
        var cursor = 0
        if let token {
            guard let value = Int(token), value > 0 else {
                throw NHError.badRequest("the continuation token is not one this hub gave")
            }
            cursor = value
        }
        let store = installations.installations(app)
        let page = try await store.installationIDs(tag: tag, cursor: cursor, count: top)
        var response = Self.feed(try await store.installations(ids: page.ids), request: request, app: app)
        if page.next != 0 { response.headers[Self.continuationHeader] = String(page.next) }
        return response
    }

    /// An Atom feed of registrations.
    static func feed(_ found: [Installation], request: Request, app: AppID) -> Response {
        let host = request.head.authority ?? "localhost"
        let now = UTCTimestamp.iso8601(milliseconds: JobQueue.nowMilliseconds())
        let url = "https://\(host)\(request.uri.path)"
        var xml = #"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">"#
        xml += #"<title type="text">Registrations</title><id>\#(url.markupEscaped)</id><updated>\#(now)</updated>"#
        xml += #"<link rel="self" href="\#(url.markupEscaped)"/>"#
        for installation in found.sorted(by: { $0.id < $1.id }) {
            guard let kind = NHRegistrationDescription.kind(of: installation) else { continue }
            xml += NHRegistrationDescription.entry(installation, kind: kind, url: Self.url(installation.id, host: host, app: app))
        }
        return answer(xml + "</feed>", type: feedType)
    }

    /// The registrations of one device: `$filter` naming its handle (``NHRegistrationFilter``).
    private func channel(_ filter: String, request: Request, app: AppID) async throws -> Response {
        let store = installations.installations(app)
        let ids = try await store.installationIDs(handles: try NHRegistrationFilter.handles(filter))
        let found = try await store.installations(ids: Array(ids.prefix(100)))
        return Self.feed(found, request: request, app: app)
    }

    /// Saves the entry in the request's body as registration `id`, answering the stored entry.
    private func save(_ request: Request, id: String, app: AppID, ifMatch: String?) async throws -> Response {
        let body = try await request.body.collect(upTo: NHXML.maxBytes)
        let entry: NHXMLElement
        do {
            entry = try NHXML.parse(Array(buffer: body))
        } catch {
            throw NHError.badRequest("the body is not XML RichPush reads: \(error.message)")
        }
        let installation = try NHRegistrationDescription.installation(entry, id: id, updatedAt: JobQueue.nowMilliseconds())
        if ifMatch != nil {
            // An update: of a registration that exists, at the version the client read.
            let current = try await installations.installations(app).installation(id: id)
            guard current != nil else { throw Self.notFound }
            guard NHRegistrationDescription.matches(ifMatch, current) else { throw Self.changed }
        }
        try await installations.save(installation, in: app)
        let kind = NHRegistrationDescription.kind(of: installation) ?? NHRegistrationDescription.kinds[0]
        return Self.answer(Self.document(entry: installation, kind: kind, request: request, app: app), type: Self.entryType)
    }

    private func tagParameter(_ context: APIRequestContext) throws -> String {
        let tag = context.parameters.get("tag") ?? ""
        do { try TagExpression.validate(tag: tag) } catch { throw NHError.badRequest(error.message) }
        return tag
    }

    static func document(entry installation: Installation, kind: NHRegistrationDescription.Kind, request: Request, app: AppID) -> String {
        #"<?xml version="1.0" encoding="utf-8"?>"#
            + NHRegistrationDescription.entry(
                installation, kind: kind, url: url(installation.id, host: request.head.authority ?? "localhost", app: app))
    }

    static func url(_ id: String, host: String, app: AppID) -> String {
        "https://\(host)/\(app.rawValue)/registrations/\(id)?api-version=2015-01"
    }

    static func answer(_ xml: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// NH's ids: two random numbers and a digit (`2372532420827572008-85883004107185159-4`).
    static func newRegistrationID() -> String {
        var random = SystemRandomNumberGenerator()
        return
            "\(random.next(upperBound: UInt64(Int64.max)))-\(random.next(upperBound: UInt64(Int64.max)))-\(random.next(upperBound: UInt64(10)))"
    }

    static let notFound = NHError(status: 404, code: "RegistrationNotFound", message: "Registration not found.")
    static let changed = NHError(
        status: 412, code: "PreconditionFailed", message: "the registration changed since it was read (If-Match names another ETag)")
}
