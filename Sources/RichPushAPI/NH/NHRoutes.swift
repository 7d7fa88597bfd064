import Foundation
import HTTPTypes
import Hummingbird
import RichPushAPNS
import RichPushCore
import RichPushNH

/// Notification Hubs' sends, at the listener's root: `/{hub}/…`, a hub being an app.
/// `POST /{hub}/messages` sends (`?direct`: to one device's handle), `POST /{hub}/messages/$batch?direct`
/// sends one native payload to up to 1,000 handles (``NHBatchDirectSend``), `POST /{hub}/schedulednotifications` sends at
/// `ServiceBusNotification-ScheduleTime` (``NHScheduleTime``), `DELETE
/// /{hub}/schedulednotifications/{id}` cancels. A send is a template send
/// (`ServiceBusNotification-Format: template`, the properties as the body) or a native one
/// (`apple`, `fcmv1`, `browser`: ``NHNativeSend``), to `ServiceBusNotification-Tags` (none: every
/// device, ``NHSendTarget``). RichPush's own create runs it (quota, limits, backlog, queue), and it
/// is answered as NH answers: 201 with the message's `Location`.
struct NHRoutes {
    let access: NHHubAccess
    let notifications: RoutesPerApp<NotificationRoutes>

    func add(to router: Router<APIRequestContext>) {
        // Hummingbird's router matches it with and without the trailing '/' the clients differ on
        // (notificationhubs-rest-python: `messages/`, the Node SDK's Python port: `messages`).
        router.post(":hub/messages") { try await send($0, context: $1, scheduled: false) }
        router.post(":hub/messages/$batch") { try await batch($0, context: $1) }
        router.post(":hub/schedulednotifications") { try await send($0, context: $1, scheduled: true) }
        router.delete(":hub/schedulednotifications/:id") { try await cancel($0, context: $1) }
        router.get(":hub/messages/:id") { try await details($0, context: $1) }
    }

    func send(_ request: Request, context: APIRequestContext, scheduled: Bool) async throws -> Response {
        let (app, context) = try await authorized(request, context: context)
        if request.uri.queryParameters["test"] != nil || request.headers[Self.testSendHeader]?.lowercased() == "true" {
            throw NHError(
                status: 400, code: "UnsupportedSend",
                message: "test sends (?test, ServiceBusNotification-TestSend) are not served yet: send without them (docs/nh.md)")
        }
        guard let format = request.headers[NotificationRoutes.formatHeader]?.lowercased() else {
            throw NHError.badRequest("ServiceBusNotification-Format is required")
        }
        let tags = request.headers[NotificationRoutes.tagsHeader]
        let sendAt = scheduled ? try NHScheduleTime.milliseconds(request.headers[Self.scheduleTimeHeader]) : nil
        var nh: NotificationRoutes.NHSend
        if let installations = try NHSendTarget.installations(tagsHeader: tags) {
            // `$InstallationId:{…}`: those devices, whatever their tags.
            nh = NotificationRoutes.NHSend(target: TagExpression.everyone, installations: installations, sendAt: sendAt)
        } else {
            nh = NotificationRoutes.NHSend(target: try NHSendTarget.target(tagsHeader: tags), sendAt: sendAt)
        }
        let routes = try await notifications.routes(for: app)
        if Self.isDirect(request) {
            nh = try await self.direct(request, format: format, scheduled: scheduled, installations: routes.installations)
        }
        let created: NotificationRoutes.Created
        if format == "template" {
            created = try await routes.created(request, context: context, nh: nh)
        } else {
            let body = try await request.body.collect(upTo: 64 * 1024)
            let native = try NHNativeSend.push(
                format: format, body: Array(buffer: body), headers: request.headers.map { ($0.name.rawName, $0.value) },
                apnsPayloadProblem: APNSPayloadCheck.problem)
            created = try await routes.created(native: native, nh: nh, body: body, request: request, context: context)
        }
        return answer(created, app: app, request: request, path: scheduled ? "schedulednotifications" : "messages")
    }

    /// A batch direct send: one native payload to the hub's devices with the handles given (up to
    /// 1,000). NH sends to any handle; RichPush sends to the devices it knows and counts the
    /// handles it does not in `RichPush-Skipped-Handles` (none known: NH's 404). Its `Location` is
    /// `…/messages/{id}`, where the JS SDK reads the id and `GET` reads the outcome.
    func batch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, context) = try await authorized(request, context: context)
        guard Self.isDirect(request) else { throw NHError.badRequest("messages/$batch is a batch direct send: add ?direct") }
        guard let format = request.headers[NotificationRoutes.formatHeader]?.lowercased(), format != "template" else {
            throw NHError.badRequest("a batch direct send is a native send: ServiceBusNotification-Format apple, fcmv1 or browser")
        }
        let body = try await request.body.collect(upTo: Self.maxBatchBytes)
        let batch = try NHBatchDirectSend.parse(contentType: request.headers[.contentType], body: Array(buffer: body))
        let native = try NHNativeSend.push(
            format: format, body: batch.notification, headers: request.headers.map { ($0.name.rawName, $0.value) },
            apnsPayloadProblem: APNSPayloadCheck.problem)
        let routes = try await notifications.routes(for: app)
        let (ids, skipped) = try await Self.devices(withHandles: batch.handles, in: routes.installations)
        let nh = NotificationRoutes.NHSend(target: TagExpression.everyone, installations: ids)
        let created = try await routes.created(native: native, nh: nh, body: body, request: request, context: context)
        var response = answer(created, app: app, request: request, path: "messages")
        if skipped > 0 { response.headers[Self.skippedHandlesHeader] = String(skipped) }
        return response
    }

    /// NH's answer to a send: 201 with the notification's `Location` (a dry run's answer as it is).
    private func answer(_ created: NotificationRoutes.Created, app: AppID, request: Request, path: String) -> Response {
        switch created {
        case .record(let id, _, _):
            let host = request.head.authority ?? "localhost"
            return Response(
                status: .created, headers: [.location: "https://\(host)/\(app.rawValue)/\(path)/\(id)?api-version=2015-04"])
        case .dryRun(let answer):
            return answer
        }
    }

    /// A direct send's target: the installations of the hub whose handle is
    /// `ServiceBusNotification-DeviceHandle` (an APNs token in either case). NH sends to any
    /// handle; RichPush sends to devices it knows (an installation or a registration), and says
    /// so for one it does not. A direct send is native, and not scheduled, as in NH.
    private func direct(
        _ request: Request, format: String, scheduled: Bool, installations: any InstallationStore
    ) async throws -> NotificationRoutes.NHSend {
        guard !scheduled, format != "template" else {
            throw NHError.badRequest("a direct send is a native send (apple, fcmv1, browser), sent now, as in NH")
        }
        guard let handle = request.headers[Self.deviceHandleHeader], (1...2048).contains(handle.utf8.count) else {
            throw NHError.badRequest("a direct send needs ServiceBusNotification-DeviceHandle (the device's token)")
        }
        let (ids, _) = try await Self.devices(withHandles: [handle], in: installations)
        return NotificationRoutes.NHSend(target: TagExpression.everyone, installations: ids)
    }

    /// `?direct` (notificationhubs-rest-python's, valueless) or `?direct=true` (the JS SDK's).
    static func isDirect(_ request: Request) -> Bool {
        request.uri.queryParameters["direct"].map { $0.lowercased() != "false" } ?? false
    }

    /// The hub's installations with one of `handles` (each looked up as ``NHRegistrationFilter``
    /// spells it, all in one round trip), each once, and how many handles no installation has;
    /// NH's 404 when none has any. NH sends to any handle; RichPush to the devices it knows.
    static func devices(
        withHandles handles: [String], in installations: any InstallationStore
    ) async throws -> (
        ids: [String], skipped: Int
    ) {
        let found = try await installations.installationIDs(byHandles: handles.map(NHRegistrationFilter.lookups(for:)))
        var seen = Set<String>()
        let ids = found.joined().filter { seen.insert($0).inserted }
        guard !ids.isEmpty else {
            throw NHError(
                status: 404, code: "DeviceNotFound",
                message:
                    "no installation or registration of this hub has the device handle given: RichPush sends to devices it knows (docs/nh.md)"
            )
        }
        return (ids, found.filter(\.isEmpty).count)
    }

    /// Cancels a scheduled send (or one still queued): 200, or NH's 404 for an id it does not know.
    func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, context) = try await authorized(request, context: context)
        _ = try await notifications.routes(for: app).cancel(request, context: context)
        return Response(status: .ok)
    }

    /// A send's outcome (``NHNotificationDetails``): 200 with NH's XML, or 404 for an id this hub
    /// did not send (a notification of RichPush's own API is not the hub's to show).
    func details(_ request: Request, context: APIRequestContext) async throws -> Response {
        let (app, _) = try await authorized(request, context: context)
        let routes = try await notifications.routes(for: app)
        let text = context.parameters.get("id") ?? ""
        guard let id = Int(text), id > 0, let record = try await routes.notifications.notification(id: id), record.creator.hasPrefix("nh."),
            let status = try await routes.notifications.status(id: id)
        else {
            throw NHError(
                status: 404, code: "NotificationNotFound", message: "no notification '\(text.prefix(32))' was sent through this hub")
        }
        // Each device counts under its installation's platform (an fcmv1 send reaches gcm
        // installations too, counted as gcm), a page of 1,000 read per round trip.
        var platforms: [String: Platform] = [:]
        let ids = status.devices.map(\.installation)
        for start in stride(from: 0, to: ids.count, by: 1000) {
            for installation in try await routes.installations.installations(ids: Array(ids[start..<min(start + 1000, ids.count)])) {
                platforms[installation.id] = installation.platform
            }
        }
        // A device whose installation is gone (its token was dead) counts under the native send's
        // platform, or the one platform the others had.
        let seen = Set(platforms.values)
        let fallback = record.native.map { Self.platform(of: $0.format) } ?? (seen.count == 1 ? seen.first : nil)
        let host = request.head.authority ?? "localhost"
        let xml = NHNotificationDetails.xml(
            notification: record, status: status, platforms: platforms, fallback: fallback,
            location: "https://\(host)/\(app.rawValue)/messages/\(id)?api-version=2015-04")
        return Response(
            status: .ok, headers: [.contentType: "application/xml; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    static func platform(of format: PushFormat) -> Platform {
        switch format {
        case .apns: .apns
        case .fcm: .fcm
        case .webpush: .webpush
        }
    }

    /// The hub's app and a context in it whose caller is the rule that signed the request: its
    /// sends are created by `nh.<rule>` (its quota, its records).
    private func authorized(_ request: Request, context: APIRequestContext) async throws -> (AppID, APIRequestContext) {
        var context = context
        let (app, rule) = try await access.authorize(request, context: context, needs: .send)
        context.app = app
        context.user = User(name: String(("nh." + rule.name).prefix(64)), role: .admin)
        return (app, context)
    }

    static let scheduleTimeHeader = HTTPField.Name("ServiceBusNotification-ScheduleTime")!
    static let testSendHeader = HTTPField.Name("ServiceBusNotification-TestSend")!
    static let deviceHandleHeader = HTTPField.Name("ServiceBusNotification-DeviceHandle")!
    static let skippedHandlesHeader = HTTPField.Name("RichPush-Skipped-Handles")!
    /// A batch's body: its payload (at most 64 KiB) and 1,000 handles of up to 2 KiB (Web Push
    /// endpoints; APNs and FCM tokens are a tenth of that), with room for the parts' headers.
    static let maxBatchBytes = 64 * 1024 + NHBatchDirectSend.maxHandles * (NHBatchDirectSend.maxHandleBytes + 4) + 4096
}
