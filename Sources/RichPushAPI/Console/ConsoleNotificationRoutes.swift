import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RichPushCore
import RichPushStorage

/// `/console/notifications`: an app's notifications found by id, creator, target tag, state and
/// time (``NotificationSearch``), and one notification's page (``NotificationDetail``): its
/// record, its payload (served by `/console/notifications/{id}/payload`), the pushes rendered as
/// the workers render them, and each device's timeline. Reading only: a viewer sees it all.
struct ConsoleNotificationRoutes: Sendable {
    let routes: ConsoleRoutes

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("notifications") { request, _ in
            let session = try await routes.session(request)
            let form = try ConsoleForm.query(of: request)
            let html = ConsolePage.wantsHTML(request)
            if let text = form["id"] {
                let app = try ConsoleScope.app(form, access: session.access)
                let detail = try await NotificationDetail.read(
                    id: Self.id(text), app: app, store: routes.backend.notifications(app),
                    installations: routes.backend.installations(app))
                if !html { return ConsolePage.json(detail.json) }
                return page(session, NotificationPage.detail(detail))
            }
            let filter: NotificationSearch.Filter
            do {
                filter = try NotificationSearch.Filter(form, access: session.access)
            } catch let error as APIError where html && error.status == .badRequest {
                // The form again, with the problem beside it.
                return page(session, NotificationPage.search(form: form, found: nil, problem: error.message), status: .badRequest)
            }
            let found = try await NotificationSearch(store: routes.backend.notifications(filter.app)).run(filter)
            if !html { return ConsolePage.json(NotificationPage.json(found, filter: filter)) }
            return page(session, NotificationPage.search(form: form, found: (filter, found), problem: nil))
        }
        console.get("notifications/:id/payload") { request, context in
            let session = try await routes.session(request)
            let app = try ConsoleScope.app(try ConsoleForm.query(of: request), access: session.access)
            let id = try Self.id(context.parameters.get("id") ?? "")
            let store = routes.backend.notifications(app)
            guard let record = try await store.notification(id: id),
                let bytes = try await store.payload(hash: record.payloadHash, notification: id)
            else {
                throw APIError.notFound("no payload of notification \(id) in app \(app.rawValue) (or it expired with the retention)")
            }
            return Self.payload(bytes, record: record)
        }
    }

    func page(_ session: ConsoleSession, _ body: HTML, status: HTTPResponse.Status = .ok) -> Response {
        ConsolePage.response(
            ConsolePage.layout(title: "Notifications", session: session, readOnly: routes.configuration.readOnly, body: body),
            status: status)
    }

    static func id(_ text: String) throws -> Int {
        guard text.utf8.count <= 19, let id = Int(text), id > 0 else {
            throw APIError.badRequest("id: a notification id is a positive integer", code: "bad_id")
        }
        return id
    }

    /// Raster images the console shows inline; anything else (SVG included: it can carry script)
    /// is offered as a download of opaque bytes.
    static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]

    static func shownInline(_ contentType: String) -> Bool {
        inlineTypes.contains(contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "")
    }

    /// The payload's bytes: an image as its type, inline; anything else as an attachment of
    /// `application/octet-stream`. Never sniffed, never run (a sandbox with nothing allowed).
    static func payload(_ bytes: [UInt8], record: RichNotification) -> Response {
        let inline = shownInline(record.contentType)
        let headers: HTTPFields = [
            .contentType: inline ? record.contentType : "application/octet-stream",
            .contentSecurityPolicy: "default-src 'none'; sandbox", .xContentTypeOptions: "nosniff", .cacheControl: "no-store",
            .crossOriginResourcePolicy: "same-origin",
            .contentDisposition: "\(inline ? "inline" : "attachment"); filename=\"notification-\(record.id).bin\"",
        ]
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// One notification as its console page shows it: the record, the status, the first
/// ``maxDevices`` devices with their installations (platform) and whether each fetched, and the
/// pushes rendered once per format those devices use.
struct NotificationDetail: Sendable {
    static let maxDevices = 200

    let app: AppID
    let record: RichNotification
    let status: NotificationStatus?
    let devices: [NotificationStatus.Device]
    let installations: [String: Installation]
    let fetched: Set<String>
    let rendered: [Rendered]

    struct Rendered: Sendable {
        let format: PushFormat
        let platforms: [String]
        let payload: Result<String, RenderError>
    }

    static func read(
        id: Int, app: AppID, store: RedisNotificationStore, installations: RedisInstallationStore
    ) async throws -> NotificationDetail {
        guard let record = try await store.notification(id: id) else {
            throw APIError.notFound("no notification \(id) in app \(app.rawValue) (or it expired with the retention)")
        }
        let status = try await store.status(id: id)
        let devices = Array((status?.devices ?? []).prefix(maxDevices))
        let found = try await installations.installations(ids: devices.map(\.installation))
        let fetched = try await store.fetched(id: id, by: devices.map(\.installation))
        var platforms: [PushFormat: Set<String>] = [:]
        for installation in found {
            platforms[PushFormat(platform: installation.platform), default: []].insert(installation.platform.rawValue)
        }
        // The workers' renderer with its default settings (`richpush worker --push-mode silent`).
        let renderer = PushRenderer()
        let rendered = platforms.keys.sorted { $0.rawValue < $1.rawValue }.map { format in
            Rendered(
                format: format, platforms: platforms[format, default: []].sorted(),
                payload: Result { () throws(RenderError) in
                    Self.pretty(try renderer.render(record, format: format, collapseID: String(record.id)).payload)
                })
        }
        return NotificationDetail(
            app: app, record: record, status: status, devices: devices,
            installations: Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            fetched: fetched, rendered: rendered)
    }

    /// JSON indented, keys sorted; as it is when it does not parse.
    static func pretty(_ bytes: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(decoding: data, as: UTF8.self)
    }

    var payloadPath: String { "/console/notifications/\(record.id)/payload?app=\(HTML.percentEncode(app.rawValue))" }

    var json: [String: Any] {
        var object: [String: Any] = [
            "id": record.id, "app": app.rawValue, "message": record.message, "richType": record.richType.rawValue,
            "contentType": record.contentType, "payloadBytes": record.payloadSize, "payloadURL": payloadPath,
            "creator": record.creator, "target": record.target, "createdAt": record.createdAt,
        ]
        if let status {
            object["state"] = status.state.rawValue
            object["counts"] = status.counts
            object["deviceCount"] = status.devices.count
        }
        object["devices"] = devices.map { device in
            [
                "installation": device.installation, "state": device.state, "adapterId": device.adapterID ?? NSNull(),
                "error": device.error ?? NSNull(),
                "platform": installations[device.installation]?.platform.rawValue ?? NSNull(),
                "fetched": fetched.contains(device.installation),
                "times": device.times ?? [:],
            ] as [String: Any]
        }
        object["rendered"] = rendered.map { item -> [String: Any] in
            switch item.payload {
            case .success(let payload): ["format": item.format.rawValue, "platforms": item.platforms, "payload": payload]
            case .failure(let error): ["format": item.format.rawValue, "platforms": item.platforms, "error": error.message]
            }
        }
        return object
    }
}
