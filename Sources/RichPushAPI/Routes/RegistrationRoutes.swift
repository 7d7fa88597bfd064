import Foundation
import Hummingbird
import RichPushCore
import RichPushQueue

/// The seed's device registration routes: `POST /api/register?handle=`, `PUT` and `DELETE
/// /api/register/{id}`.
struct RegistrationRoutes {
    let installations: any InstallationStore
    let quotas: APIConfiguration.Quotas

    static let fields = ["Platform", "Handle", "Tags", "Environment", "Subscription", "pushChannel", "Templates", "Locale"]
    static let maxTags = 60

    /// Adds the routes; each request runs on its app's routes (built once per app).
    static func add(to group: RouterGroup<APIRequestContext>, for routes: RoutesPerApp<Self>) {
        group.post("register") { try await routes($1).create($0, context: $1) }
        group.put("register/:id") { try await routes($1).update($0, context: $1) }
        group.delete("register/:id") { try await routes($1).delete($0, context: $1) }
        group.patch("register/:id/templates/:name") { try await routes($1).patchTemplate($0, context: $1) }
    }

    @Sendable func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.listen)
        let handle = request.uri.queryParameters["handle"].map(String.init)
        if let handle, !handle.isEmpty { try Self.validate(handle: handle) }
        let id = try await installations.registrationID(forHandle: handle, owner: user.name)
        return try JSONResponse.encode(id, status: .ok)
    }

    @Sendable func update(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.listen)
        let id = try Self.registrationID(context)
        let body = try await request.body.collect(upTo: 64 * 1024)
        let object = try JSONObjectBody.members(
            body, allowed: Self.fields,
            shape:
                "{\"Platform\", \"Handle\", \"Tags\", \"Environment\", \"Subscription\" or \"pushChannel\" (webpush), \"Templates\", \"Locale\"}"
        )
        guard let platformName = object["Platform"]?.string else {
            throw APIError.badRequest("'Platform' is required", code: "missing_field")
        }
        guard let platform = Platform(seedName: platformName) else {
            throw APIError.badRequest(
                "unknown platform '\(platformName)'; known: \(Platform.allCases.map(\.rawValue).joined(separator: ", "))",
                code: "unknown_platform")
        }
        let (handle, webPushKeys) = try Self.handle(object, platform: platform)
        if let problem = PushHandle.problem(with: handle, platform: platform) {
            throw APIError.badRequest(problem, code: "bad_handle")
        }
        let environment = try Self.apnsEnvironment(object["Environment"], platform: platform)
        var tags = Set<String>()
        if let rawTags = object["Tags"], rawTags != .null {
            guard case .array(let items) = rawTags else {
                throw APIError.badRequest("'Tags' must be an array of strings", code: "wrong_type")
            }
            guard items.count <= Self.maxTags else { throw APIError.unprocessable("at most \(Self.maxTags) tags per registration") }
            for item in items {
                guard let tag = item.string else { throw APIError.badRequest("'Tags' must be an array of strings", code: "wrong_type") }
                do { try TagExpression.validate(tag: tag) } catch { throw APIError.unprocessable(error.message, code: "invalid_tag") }
                // username: tags name a user; only admins may put someone else's on a device.
                if tag.hasPrefix("username:") && tag != Installation.userTag(user.name) && user.role != .admin {
                    throw APIError.forbidden("only the tag \(Installation.userTag(user.name)) may name a user on your devices")
                }
                tags.insert(tag)
            }
        }
        tags.insert(Installation.userTag(user.name))
        let templates = try Self.templates(object["Templates"], platform: platform)
        let locale = try Self.locale(object["Locale"])
        let installation = Installation(
            id: id, platform: platform, handle: handle, tags: tags.sorted(), owner: user.name, updatedAt: JobQueue.nowMilliseconds(),
            apnsEnvironment: environment, webPushKeys: webPushKeys, templates: templates, locale: locale)
        return try await save(installation, user: user)
    }

    /// Saves `installation` for `user`, answering the registration or why not.
    func save(_ installation: Installation, user: User) async throws -> Response {
        let id = installation.id
        switch try await installations.save(
            installation, limits: RegistrationLimits(registrations: quotas.registrations, tags: quotas.tags))
        {
        case .ownedByAnotherUser:
            throw APIError.notFound("no registration \(id) of yours")
        case .handleTaken:
            throw APIError(
                .conflict, code: "handle_taken",
                message:
                    "this push handle is registered by another user; that registration must be deleted before the device is registered again"
            )
        case .tooManyRegistrations:
            throw APIError.quotaExceeded(
                QuotaRefusal(message: "\(user.name) may own \(quotas.registrations) registrations; delete one first", retryAfter: 60))
        case .tooManyTags:
            throw APIError.quotaExceeded(
                QuotaRefusal(message: "\(user.name)'s registrations may carry \(quotas.tags) distinct tags", retryAfter: 60))
        case .created, .updated:
            return try JSONResponse.encode(RegistrationView(installation), status: .ok)
        }
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.listen)
        let id = try Self.registrationID(context)
        guard try await installations.delete(id: id, owner: user.name) else { throw APIError.notFound("no registration \(id) of yours") }
        return Response(status: .ok)
    }

    /// A handle before its platform is known (`POST /api/register?handle=`): 1 to 512 printable
    /// ASCII characters; `PUT` checks it against its platform's rules.
    static func validate(handle: String) throws {
        if let problem = PushHandle.problem(with: handle, platform: .apns) {
            throw APIError.badRequest(problem, code: "bad_handle")
        }
    }

    /// The body's `Environment`: absent (or null) is production; `sandbox` or `production`
    /// (exactly) for platform `apns`; on another platform any value is refused (422), since only
    /// Apple has two services and a value there would be silently meaningless.
    static func apnsEnvironment(_ value: JSONValue?, platform: Platform) throws -> APNSEnvironment {
        guard let value, value != .null else { return .production }
        guard let name = value.string else {
            throw APIError.badRequest("'Environment' must be a string: production or sandbox", code: "wrong_type")
        }
        guard let environment = APNSEnvironment(rawValue: name) else {
            throw APIError.badRequest(
                "unknown APNs environment '\(name)'; known: \(APNSEnvironment.allCases.map(\.rawValue).joined(separator: ", "))",
                code: "unknown_environment")
        }
        guard platform == .apns else {
            throw APIError.unprocessable(
                "'Environment' is for platform apns only (Apple's sandbox or production service), not \(platform.rawValue)",
                code: "environment_not_apns")
        }
        return environment
    }

    static func registrationID(_ context: APIRequestContext) throws -> String {
        guard let id = context.parameters.get("id"), (1...64).contains(id.count),
            id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") })
        else {
            throw APIError.badRequest("a registration id is 1 to 64 letters, digits or dashes", code: "bad_id")
        }
        return id
    }
}

/// A registration as the API shows it; `Environment` only for platform `apns`, `Templates` and
/// `Locale` only when it has them.
struct RegistrationView: Codable {
    struct TemplateView: Codable {
        var Body: String
        var Headers: [String: String]?
        var Tags: [String]?
        var Missing: String
        var Defaults: [String: String]?
        var Expiry: String?
    }

    var RegistrationId: String
    var Platform: String
    var Handle: String
    var Tags: [String]
    var Environment: String?
    var Templates: [String: TemplateView]?
    var Locale: String?

    init(_ installation: Installation) {
        RegistrationId = installation.id
        Platform = installation.platform.rawValue
        Handle = installation.handle
        Tags = installation.tags
        Environment = installation.platform == .apns ? installation.apnsEnvironment.rawValue : nil
        Locale = installation.locale
        if !installation.templates.isEmpty {
            Templates = Dictionary(
                installation.templates.map { template in
                    (
                        template.name,
                        TemplateView(
                            Body: template.body, Headers: template.headers.isEmpty ? nil : template.headers,
                            Tags: template.tags.isEmpty ? nil : template.tags, Missing: template.missing.rawValue,
                            Defaults: template.defaults.isEmpty ? nil : template.defaults, Expiry: template.expiry)
                    )
                }, uniquingKeysWith: { first, _ in first })
        }
    }
}
