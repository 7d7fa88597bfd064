import Foundation
import Hummingbird
import RichPushApps
import RichPushCore
import RichPushQueue

/// The operator's routes for apps: `GET/POST /api/apps`, `GET/PATCH/DELETE /api/apps/{id}`.
/// Credentials go in (and are sealed before they are stored); only ids, fingerprints and the Web
/// Push public key come out.
struct AppRoutes {
    let apps: any AppStore
    /// Each app's users (an app is created only if no default user's name would then name it,
    /// and removed only once it has no users).
    let users: @Sendable (AppID) -> any UserStore
    /// Writes an app's stored weight and cap into the queue's partitions (nil: stored only).
    var applyScheduling: (@Sendable (AppID, AppShare) async throws -> Void)?
    /// Clears a removed app's weight, cap and pause from the queue (nil: no queue).
    var forgetScheduling: (@Sendable (AppID) async throws -> Void)?

    static let maxBodyBytes = 64 * 1024

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get(use: list)
        group.post(use: create)
        group.get(":id", use: show)
        group.patch(":id", use: update)
        group.delete(":id", use: remove)
    }

    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let all = try await apps.list().filter { app in context.managedApp.map { $0 == app.id.rawValue } ?? true }
        return try JSONResponse.encode(["apps": all.map(AppView.init)], status: .ok)
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try Self.id(context)
        guard let app = try await apps.summary(id: id) else { throw APIError.notFound("no app '\(id)'") }
        return try JSONResponse.encode(AppView(app), status: .ok)
    }

    @Sendable func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        try Self.operatorOnly(context, "create an app")
        let body = try await AppBody.parse(try await request.body.collect(upTo: Self.maxBodyBytes), creating: true)
        guard let id = body.id else { throw APIError.badRequest("'id' (an app id such as \"shop\") is required", code: "missing_field") }
        if let problem = try await AppGuards.creationProblem(id, defaultUsers: users(.default)) {
            throw APIError(.conflict, code: "app_id_in_use", message: problem)
        }
        var credentials = body.change.set
        var change = body.change
        change.limits = body.limits(over: .none)
        if credentials.webPush == nil, !body.change.remove.contains(.webPush) {
            // Every app gets a VAPID key pair, so browsers can subscribe from the start.
            credentials.webPush = try await Self.mapped { () throws(AppError) in
                try WebPushCredential.generate(subject: body.webPushSubject ?? "")
            }
        }
        change.set = credentials
        change.name = body.change.name ?? id.rawValue
        change.scheduling = body.scheduling(over: AppShare())
        let app = try await Self.mapped { try await apps.create(id: id, change: change) }
        context.logger.info("app created", metadata: ["app": "\(id)", "platforms": "\(app.credentials.keys.sorted().map(\.rawValue))"])
        // Always, so nothing an earlier app of the same id left in the queue stays.
        try await apply(app, context: context, retry: "PATCH /api/apps/\(id) with the same weight and maxInFlight")
        return try JSONResponse.encode(AppView(app), status: .created, headers: [.location: "/api/apps/\(id)"])
    }

    @Sendable func update(_ request: Request, context: APIRequestContext) async throws -> Response {
        let id = try Self.id(context)
        let body = try await AppBody.parse(try await request.body.collect(upTo: Self.maxBodyBytes), creating: false)
        var change = body.change
        if !body.limits.isEmpty {
            // The operator's bound on the app: its own manage key does not move it.
            try Self.operatorOnly(context, "change an app's limits")
            guard let current = try await apps.summary(id: id) else { throw APIError.notFound("no app '\(id)'") }
            change.limits = body.limits(over: current.limits)
        }
        if body.weight != nil || body.maxInFlight != nil {
            // The operator's share of the workers: an app's own manage key does not move it.
            try Self.operatorOnly(context, "change an app's weight or cap")
            guard let current = try await apps.summary(id: id) else { throw APIError.notFound("no app '\(id)'") }
            change.scheduling = body.scheduling(over: current.scheduling)
        }
        if let subject = body.webPushSubject, change.set.webPush == nil {
            // A new contact for the key pair the app has (or a new pair when it has none).
            let current = try await Self.mapped { try await apps.credentials(id: id) }
            guard let current else { throw APIError.notFound("no app '\(id)'") }
            change.set.webPush = try await Self.mapped { () throws(AppError) in
                if let pair = current.credentials.webPush { return try WebPushCredential(privateKey: pair.privateKey, subject: subject) }
                return try WebPushCredential.generate(subject: subject)
            }
        }
        let app = try await Self.mapped { try await apps.update(id: id, change: change) }
        context.logger.info("app changed", metadata: ["app": "\(id)", "version": "\(app.version)"])
        if change.scheduling != nil { try await apply(app, context: context, retry: "send the same request again") }
        return try JSONResponse.encode(AppView(app), status: .ok)
    }

    @Sendable func remove(_ request: Request, context: APIRequestContext) async throws -> Response {
        try Self.operatorOnly(context, "remove an app")
        let id = try Self.id(context)
        if !id.isDefault, let problem = try await AppGuards.removalProblem(id, users: users(id)) {
            throw APIError(.conflict, code: "app_not_empty", message: problem)
        }
        guard try await apps.summary(id: id) != nil else { throw APIError.notFound("no app '\(id)'") }
        // The queue first: a failure leaves the app in place, and the same DELETE finishes the job.
        if let forgetScheduling {
            do {
                try await forgetScheduling(id)
            } catch {
                context.logger.error(
                    "app's weight, cap and pause not cleared from the queue", metadata: ["app": "\(id)", "error": "\(error)"])
                throw APIError(
                    .serviceUnavailable, code: "scheduling_not_cleared",
                    message:
                        "app '\(id)' was not removed: the queue could not be told to forget its weight, cap and pause yet; send the same request again",
                    headers: [.retryAfter: "1"])
            }
        }
        guard try await Self.mapped({ try await apps.remove(id: id) }) else { throw APIError.notFound("no app '\(id)'") }
        context.logger.info("app removed", metadata: ["app": "\(id)"])
        return Response(status: .noContent)
    }

    /// Writes the app's stored weight and cap into the queue (stored first: the record says what
    /// the operator asked for, and the same request again finishes the job). A failure is 503
    /// `scheduling_not_applied`, saying the change is stored and how to apply it.
    private func apply(_ app: AppSummary, context: APIRequestContext, retry: String) async throws {
        guard let applyScheduling else { return }
        do {
            try await applyScheduling(app.id, app.scheduling)
        } catch {
            context.logger.error(
                "app's weight and cap stored but not written into the queue", metadata: ["app": "\(app.id)", "error": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: "scheduling_not_applied",
                message: "app '\(app.id)' is stored (version \(app.version)) with weight \(app.scheduling.weight) and maxInFlight "
                    + "\(app.scheduling.maxInFlight.map(String.init) ?? "none"), but the queue could not be told yet: \(retry)",
                headers: [.retryAfter: "1"])
        }
    }

    /// The app of the path; a manager's key sees its own app only (404 for any other, as for none).
    private static func id(_ context: APIRequestContext) throws -> AppID {
        let text = context.parameters.get("id") ?? ""
        let id: AppID
        do {
            id = try AppID(text)
        } catch {
            throw APIError.badRequest(error.description, code: "bad_app_id")
        }
        if let managed = context.managedApp, managed != id.rawValue { throw APIError.notFound("no app '\(id)'") }
        return id
    }

    private static func operatorOnly(_ context: APIRequestContext, _ what: String) throws {
        if context.managedApp != nil {
            throw APIError(.forbidden, code: "operator_only", message: "only the operator may \(what); a manage key changes its own app")
        }
    }

    /// Runs `body`, answering an ``AppError`` as the API error that says what to do.
    static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AppError {
            throw apiError(error)
        }
    }

    static func apiError(_ error: AppError) -> APIError {
        switch error {
        case .invalid(field: "id", _): APIError.unprocessable(error.description, code: "bad_app_id")
        case .invalid: APIError.unprocessable(error.description, code: "invalid_credentials")
        case .notFound: APIError.notFound(error.description)
        case .exists: APIError(.conflict, code: "app_exists", message: error.description)
        case .cannotRemoveDefault: APIError(.conflict, code: "default_app", message: error.description)
        case .unknownKeyEncryptionKey, .unreadable, .noKeyEncryptionKey:
            APIError(.internalServerError, code: "key_encryption_key", message: error.description)
        }
    }
}

/// An app as the API shows it.
struct AppView: Encodable {
    let id: String
    let name: String
    let createdAt: String?
    let updatedAt: String?
    let version: Int
    let apns: [String: String]?
    let fcm: [String: String]?
    let webPush: [String: String]?
    let limits: AppLimits
    let defaultLocale: String?
    /// How its notifications go when the sender says nothing (absent: the workers' push mode).
    let defaultDelivery: String?
    /// Its weight under fair scheduling, and its cap on jobs in flight per queue partition (absent: none).
    let weight: Int
    let maxInFlight: Int?
    /// Its sending is paused (the console's or `richpush apps pause`).
    let paused: Bool
    /// Its Notification Hubs rules: name → rights, never a key (absent: none; docs/nh.md).
    let nhRules: [String: [String]]?

    init(_ app: AppSummary) {
        paused = app.paused
        nhRules = app.nhRules.isEmpty ? nil : app.nhRules
        defaultLocale = app.defaultLocale
        defaultDelivery = app.defaultDelivery?.rawValue
        weight = app.scheduling.weight
        maxInFlight = app.scheduling.maxInFlight
        id = app.id.rawValue
        name = app.name
        createdAt = app.createdAt > 0 ? UTCTimestamp.iso8601(milliseconds: app.createdAt) : nil
        updatedAt = app.updatedAt > 0 ? UTCTimestamp.iso8601(milliseconds: app.updatedAt) : nil
        version = app.version
        apns = app.credentials[.apns]
        fcm = app.credentials[.fcm]
        webPush = app.credentials[.webPush]
        limits = app.limits
    }
}
