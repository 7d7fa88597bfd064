import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// Rich notifications: create (`POST /api/notifications`), the device's background fetch
/// (`GET /api/notifications/{id}`), status, receipts and the caller's list.
struct NotificationRoutes {
    let notifications: any NotificationStore
    let installations: any InstallationStore
    let backlog: BacklogGuard
    let configuration: APIConfiguration
    /// The store's cached record, if it has one (no round trip): the caller's own records are
    /// read from it (see NotificationRoutes+Access).
    var cachedRecord: @Sendable (Int) -> RichNotification? = { _ in nil }
    /// Bounds the batches worked on at once (their bodies and items are in memory meanwhile).
    let batches: WorkGate
    /// The caller's app and its limits (see NotificationRoutes+AppLimits).
    var app: AppID = .default
    var appLimits: AppLimits = .none
    /// The app's default locale, stored with each template send (the locale chain's third step).
    var defaultLocale: String?
    /// The app's default delivery, for a send that names none.
    var defaultDelivery: PushRenderer.Mode?

    /// `batches`: the gate shared by every app's routes (one is made when nil).
    init(
        notifications: any NotificationStore, installations: any InstallationStore, backlog: BacklogGuard, configuration: APIConfiguration,
        cachedRecord: @escaping @Sendable (Int) -> RichNotification? = { _ in nil }, batches: WorkGate? = nil
    ) {
        self.notifications = notifications
        self.installations = installations
        self.backlog = backlog
        self.configuration = configuration
        self.cachedRecord = cachedRecord
        self.batches = batches ?? Self.batchGate(configuration)
    }

    /// The gate that bounds the batches worked on at once.
    static func batchGate(_ configuration: APIConfiguration) -> WorkGate {
        WorkGate(
            concurrency: configuration.batchConcurrency, queueLimit: configuration.batchQueueLimit,
            busy: "too many batches are being created")
    }

    /// Adds the routes; each request runs on its app's routes (built once per app).
    static func add(to group: RouterGroup<APIRequestContext>, for routes: RoutesPerApp<Self>) {
        group.post("notifications") { try await routes($1).create($0, context: $1) }
        group.post("notifications/batch") { try await routes($1).createBatch($0, context: $1) }
        group.get("notifications") { try await routes($1).list($0, context: $1) }
        group.get("notifications/missed") { try await routes($1).missed($0, context: $1) }
        group.get("notifications/:id") { try await routes($1).fetch($0, context: $1) }
        group.get("notifications/:id/status") { try await routes($1).status($0, context: $1) }
        group.post("notifications/:id/receipts") { try await routes($1).receipt($0, context: $1) }
        group.delete("notifications/:id") { try await routes($1).cancel($0, context: $1) }
    }

    // MARK: - Create

    @Sendable func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        switch try await created(request, context: context) {
        case .record(let id, let target, let replayed): Self.accepted(id: id, target: target, replayed: replayed)
        case .dryRun(let answer): answer
        }
    }

    /// What a create made: a notification (or the one its idempotency key replayed), or a dry
    /// run's answer.
    enum Created {
        case record(id: Int, target: String, replayed: Bool)
        case dryRun(Response)
    }

    /// What Notification Hubs' send route reads from NH's headers, over what the request says.
    struct NHSend: Sendable {
        /// The tag expression (`*`: every device).
        var target: String
        /// Only these installations (NH's `$InstallationId:{…}`); nil: the whole target.
        var installations: [String]?
        /// When to send, ms since 1970 (a scheduled send); nil: now.
        var sendAt: Int64?
    }

    /// A create up to its answer (shared with Notification Hubs' template send, `nh`, which
    /// answers as NH: its properties are the whole body and only devices with a template get it).
    func created(_ request: Request, context: APIRequestContext, nh: NHSend? = nil) async throws -> Created {
        let user = try context.caller(.send)
        // NH's sends are bounded as NH bounds them (64 KiB), RichPush's by the API's own limit.
        let body = try await request.body.collect(upTo: nh == nil ? configuration.maxBodyBytes : min(configuration.maxBodyBytes, 64 * 1024))
        let isTemplate = try nh != nil || Self.isTemplateFormat(request)
        var input =
            isTemplate
            ? NotificationInput(properties: try NotificationInput.parseProperties(Array(buffer: body)))
            : try parse(body, contentType: request.headers[.contentType])
        // A template send names its target in NH's header: a tag expression.
        if isTemplate, let tags = nh?.target ?? request.headers[Self.tagsHeader] { input.target = tags }
        if let nh {
            input.sendAt = nh.sendAt.map(String.init)
            // NH's template send is the properties alone: they are what a device fetching it reads.
            input.richType = .text
            input.payload = Array(buffer: body)
        }
        if body.readableBytes == 0 || input.properties != nil && input.payload == nil && input.richType == nil {
            // The tutorial's "Send push": the configured image and its message (and a template
            // send's rich push, when it names none).
            input.payload = configuration.defaultImage
            input.richType = .image
        }
        return try await create(input, native: nil, nh: nh, body: body, request: request, context: context, user: user)
    }

    /// A native send of Notification Hubs: stored with its payload as the notification's text,
    /// so that a device fetching it by id reads what it was sent.
    func created(native: NativePush, nh: NHSend, body: ByteBuffer, request: Request, context: APIRequestContext) async throws -> Created {
        let user = try context.caller(.send)
        var input = NotificationInput()
        input.message = "\(native.format.rawValue) native push"
        input.richType = .text
        input.payload = Array(native.body.utf8)
        input.target = nh.target
        input.sendAt = nh.sendAt.map(String.init)
        return try await create(input, native: native, nh: nh, body: body, request: request, context: context, user: user)
    }

    /// The create's checks and store, shared by the sends above: the draft, a dry run, the
    /// idempotency key, the backlog, the audience, the app's charge, the record and its job.
    private func create(
        _ input: NotificationInput, native: NativePush?, nh: NHSend?, body: ByteBuffer, request: Request, context: APIRequestContext,
        user: User
    ) async throws -> Created {
        var draft = try input.draft(
            as: user, maxPayloadBytes: configuration.maxPayloadBytes, defaultLocale: defaultLocale, defaultDelivery: defaultDelivery)
        draft.native = native
        // NH's template send reaches devices with a template alone.
        draft.templatesOnly = nh != nil && native == nil
        draft.installations = nh?.installations
        // A dry run checks all of the above and stores, charges and sends nothing.
        if try Self.isDryRun(request) { return .dryRun(try await dryRun(draft)) }
        if let key = try Self.idempotencyKey(request, user: user, body: body) {
            switch try await notifications.claim(key) {
            case .completed(let id):
                // The same request again: the first answer, nothing created (the fingerprint
                // matched, so the target is the one it was created with).
                return .record(id: id, target: draft.target, replayed: true)
            case .inFlight(let retryAfter):
                throw Self.keyInUse(retryAfter: retryAfter)
            case .mismatch:
                throw Self.keyReused
            case .claimed:
                draft.idempotency = key
            }
        }
        do {
            try await backlog.check()
            try await checkAudience(draft.target)
            try await chargeApp([draft.payload.count])
            draft.quota = configuration.quotas.notificationLimits
            // The quota is charged in the same step (one round trip on one Redis); a refusal is a
            // 429 (ErrorMiddleware.apiError).
            let record = try await notifications.create(draft) { bytes in
                Hex.encode(SHA256.hash(data: bytes))
            }
            context.logger.info(
                "notification accepted", metadata: ["notification.id": "\(record.id)", "notification.target": "\(record.target)"])
            return .record(id: record.id, target: record.target, replayed: false)
        } catch {
            // Not created: the key is free again at once for the client's retry (or, if Redis
            // cannot be told now, when the claim expires).
            if let key = draft.idempotency {
                do {
                    try await notifications.release(key)
                } catch let releaseError {
                    context.logger.warning("cannot release an idempotency key", metadata: ["error": "\(releaseError)"])
                }
            }
            throw error
        }
    }

    /// `DELETE /api/notifications/{id}`: cancels a notification that is scheduled, still queued, or
    /// part-way through a split fan-out (its creator or an admin); its jobs then send nothing more,
    /// and the answer says how many pushes went out before. 409 once all its pushes went out.
    @Sendable func cancel(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.send)
        let id = try Self.notificationID(context)
        // Its creator or an admin; someone else's id is answered as a missing one, after the same check.
        let lookup = try await lookUp(id, by: user, via: nil) { [notifications] check in
            try await notifications.isReadable(id: id, ReadCheck(creator: check.creator, addressees: []))
        }
        guard lookup.record != nil, lookup.addressees == nil else { throw APIError.notFound("no notification \(id)") }
        switch try await notifications.cancel(id: id) {
        case .cancelled, .alreadyCancelled:
            let sent = try await notifications.status(id: id)?.counts[DeliveryCounter.sent.rawValue] ?? 0
            return try JSONResponse.encode(CancelledView(id: String(id), state: DeliveryState.cancelled.rawValue, sent: sent), status: .ok)
        case .tooLate(let state):
            throw APIError(
                .conflict, code: "already_sent",
                message: "notification \(id) is \(state.rawValue): all its pushes went out, too late to cancel")
        case .notFound:
            throw APIError.notFound("no notification \(id)")
        }
    }

    struct CancelledView: Encodable {
        let id: String
        let state: String
        /// Pushes that went out before the cancel.
        let sent: Int
    }

    static let idempotencyHeader = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!

    /// The request's `Idempotency-Key` with the fingerprint of what it asks (media type and body).
    static func idempotencyKey(_ request: Request, user: User, body: ByteBuffer) throws -> IdempotencyKey? {
        guard let key = request.headers[idempotencyHeader] else { return nil }
        if let problem = IdempotencyKey.problem(with: key) { throw APIError.badRequest(problem, code: "bad_idempotency_key") }
        var hasher = SHA256()
        hasher.update(data: Array((request.headers[.contentType] ?? "").utf8) + [0])
        hasher.update(data: Array(buffer: body))
        return IdempotencyKey(user: user.name, key: key, fingerprint: Hex.encode(hasher.finalize()))
    }

    /// 409: the first request with this key (or batch item) is still being handled.
    static func keyInUse(retryAfter: Duration) -> APIError {
        APIError(
            .conflict, code: "idempotency_key_in_use",
            message: "a request with this Idempotency-Key is still being handled; retry after it",
            headers: [.retryAfter: "\(max(1, retryAfter.components.seconds))"])
    }

    /// 422: the key was first used with another request (or batch item).
    static let keyReused = APIError.unprocessable(
        "this Idempotency-Key was used with a different request; use a new key for a new notification",
        code: "idempotency_key_reused")

    /// The answer to a create: `{"id", "payload", "status", "target"}`. Written directly (keys
    /// sorted, as `JSONResponse.encode` writes them): JSONEncoder cost 4 % of a create's CPU.
    static func accepted(id: Int, target: String, replayed: Bool) -> Response {
        let location = "/api/notifications/\(id)"
        var headers: HTTPFields = [.location: "\(location)/status"]
        if replayed { headers[replayedHeader] = "true" }
        var json = JSONWriter(capacity: 160)
        json.beginObject()
        json.field("id", String(id))
        json.field("payload", location)
        json.field("status", "\(location)/status")
        json.field("target", target)
        json.endObject()
        return JSONResponse.written(json.bytes, status: .accepted, headers: headers)
    }

    private func parse(_ body: ByteBuffer, contentType: String?) throws -> NotificationInput {
        guard body.readableBytes > 0 else { return NotificationInput() }
        let type = contentType.map { MediaType.essence(of: $0).lowercased() } ?? ""
        switch type {
        case "application/json":
            return try NotificationInput.json(body)
        case "multipart/form-data":
            return try NotificationInput.multipart(body, boundary: try NotificationInput.boundary(of: contentType ?? ""))
        default:
            throw APIError.unsupportedMediaType(
                "send application/json or multipart/form-data (got '\(type.isEmpty ? "no Content-Type" : type)')")
        }
    }

    // MARK: - Read

    @Sendable func fetch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        let id = try Self.notificationID(context)
        // The fetch may name the device (`?installation=`): fetched then counts once per device,
        // and reading is decided by that one device (not by every device the user has).
        let installation = request.uri.queryParameters["installation"].map(String.init)
        let ifNoneMatch = request.headers[.ifNoneMatch]
        let lookup = try await lookUp(id, by: user, via: installation) { [notifications] check in
            // A fetch's read check records it in the same round trip; a revalidation records
            // nothing, so its check is a lookup of its own.
            ifNoneMatch == nil
                ? try await notifications.recordFetch(id: id, installation: installation, reader: user.name, if: check)
                : try await notifications.isReadable(id: id, check)
        }
        guard let record = lookup.record else { throw APIError.notFound("no notification \(id)") }
        if Self.matches(ifNoneMatch: ifNoneMatch, etag: Self.etag(record)) {
            return Response(status: .notModified, headers: [.eTag: Self.etag(record), .cacheControl: "private, max-age=3600"])
        }
        if ifNoneMatch != nil || lookup.checked == nil {
            // Not recorded yet: a fetch with an If-None-Match that did not match, an admin's, or
            // its creator's found in the cache. The read is allowed: only the record's expiry
            // (a moment's race) can make it false.
            guard try await notifications.recordFetch(id: id, installation: installation, reader: user.name, if: nil) else {
                throw APIError.notFound("no notification \(id)")
            }
        }
        // Looked up once the read is allowed, so a 404 has no payload lookup to time. (One found
        // expired though the check found its record was counted as fetched: both expire
        // together, so only a moment's race gets here.)
        return try await Self.payloadResponse(of: record, from: notifications)
    }

    /// The answer to a fetch that was allowed: `record`'s payload (410 once it expired).
    static func payloadResponse(of record: RichNotification, from notifications: any NotificationStore) async throws -> Response {
        guard let payload = try await notifications.payload(hash: record.payloadHash, notification: record.id) else {
            throw APIError(.gone, code: "gone", message: "the payload of notification \(record.id) has expired")
        }
        // The caller chose the content type: a browser must neither sniff it nor run it.
        let disposition = MediaType.isInline(record.contentType) ? "inline" : "attachment"
        return Response(
            status: .ok,
            headers: [
                .contentType: record.contentType, .contentLength: "\(payload.count)", .eTag: Self.etag(record),
                .cacheControl: "private, max-age=3600",
                .xContentTypeOptions: "nosniff", .contentSecurityPolicy: "default-src 'none'; sandbox",
                .contentDisposition: "\(disposition); filename=\"notification-\(record.id)\"",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: payload)))
    }

    /// A payload's strong validator: its SHA-256, quoted.
    static func etag(_ record: RichNotification) -> String { "\"\(record.payloadHash)\"" }

    @Sendable func status(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        let (record, addressees) = try await readable(try Self.notificationID(context), by: user)
        guard var status = try await notifications.status(id: record.id) else { throw APIError.notFound("no notification \(record.id)") }
        if let addressees {
            // Other users' installations and outcomes are the creator's business only.
            let own = Set(addressees)
            status.devices = status.devices.filter { own.contains($0.installation) }
        }
        return try JSONResponse.encode(StatusView(status, record: record), status: .ok)
    }

    @Sendable func receipt(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        let id = try Self.notificationID(context)
        let body = try await request.body.collect(upTo: 16 * 1024)
        let parsed = Result {
            try JSONObjectBody.members(
                body, allowed: ["kind", "installation"], shape: "{\"kind\": \"displayed\"|\"opened\", \"installation\": \"…\"}")
        }
        // A receipt names its device: reading is decided by that one device. A body that does not
        // parse is refused after the read check, so an unreadable notification is 404 whatever the body.
        let installation = (try? parsed.get())?["installation"]?.string
        guard let kindName = (try? parsed.get())?["kind"]?.string, let kind = ReceiptKind(rawValue: kindName) else {
            _ = try await readable(id, by: user, via: installation)
            _ = try parsed.get()
            throw APIError.unprocessable(
                "'kind' must be one of: \(ReceiptKind.allCases.map(\.rawValue).joined(separator: ", "))", code: "bad_kind")
        }
        // The read check and the receipt's bookkeeping in one round trip.
        let lookup = try await lookUp(id, by: user, via: installation) { [notifications] check in
            try await notifications.recordReceipt(id: id, kind: kind, installation: installation, reader: user.name, if: check)
        } allows: {
            $0 != .unreadable
        }
        var outcome = lookup.checked ?? .unreadable
        if lookup.checked == nil, lookup.record != nil {
            // An admin's receipt, or its creator's found in the cache.
            outcome = try await notifications.recordReceipt(id: id, kind: kind, installation: installation, reader: user.name, if: nil)
        }
        switch outcome {
        case .unreadable:
            throw APIError.notFound("no notification \(id)")
        case .counted, .duplicate:
            // `{"duplicate", "recorded"}`, keys sorted, written directly (a receipt per push).
            // `duplicate`: this (kind, device or reader) was already counted; receipts count once.
            var json = JSONWriter(capacity: 48)
            json.beginObject()
            json.field("duplicate", outcome == .duplicate)
            json.field("recorded", kind.rawValue)
            json.endObject()
            return JSONResponse.written(json.bytes, status: .ok)
        }
    }

    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        let limitText = request.uri.queryParameters["limit"].map(String.init) ?? "20"
        guard let limit = Int(limitText), (1...100).contains(limit) else {
            throw APIError.badRequest("'limit' must be an integer from 1 to 100", code: "bad_limit")
        }
        var before: Int?
        if let cursor = request.uri.queryParameters["cursor"] {
            guard let value = Int(String(cursor)), value > 0 else {
                throw APIError.badRequest("'cursor' must be the nextCursor of a previous page", code: "bad_cursor")
            }
            before = value
        }
        let page = try await notifications.notifications(createdBy: user.name, before: before, limit: limit)
        let next = page.count == limit ? page.last.map { String($0.id) } : nil
        return try JSONResponse.encode(ListView(notifications: page.map(SummaryView.init), nextCursor: next), status: .ok)
    }

    /// `GET /api/notifications/missed?installation=&after=&limit=`: what the caller's device
    /// `installation` was sent after notification `after` and has not fetched (``MissedPushes``).
    @Sendable func missed(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.read)
        guard let installation = request.uri.queryParameters["installation"].map(String.init), !installation.isEmpty else {
            throw APIError.badRequest("'installation' is required: the device's registration id", code: "missing_installation")
        }
        let afterText = request.uri.queryParameters["after"].map(String.init) ?? "0"
        guard afterText.utf8.count <= 19, let after = Int(afterText), after >= 0 else {
            throw APIError.badRequest("'after' must be 0 or the cursor of a previous answer", code: "bad_cursor")
        }
        let limitText = request.uri.queryParameters["limit"].map(String.init) ?? "50"
        guard let limit = Int(limitText), (1...MissedPushes.maxLimit).contains(limit) else {
            throw APIError.badRequest("'limit' must be an integer from 1 to \(MissedPushes.maxLimit)", code: "bad_limit")
        }
        try await checkOwned(installation, by: user)
        let page = try await MissedPushes(notifications: notifications).page(of: installation, after: after, limit: limit)
        return try JSONResponse.encode(page, status: .ok)
    }

    /// RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (`W/` ignored); with no
    /// `etag` (no such notification) only `*`.
    static func matches(ifNoneMatch header: String?, etag: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == "*" || tag == etag
        }
    }

    static func notificationID(_ context: APIRequestContext) throws -> Int {
        guard let text = context.parameters.get("id"), let id = Int(text), id > 0, String(id) == text else {
            throw APIError.badRequest("a notification id is a positive decimal integer", code: "bad_id")
        }
        return id
    }
}

struct SummaryView: Codable {
    var id: String
    var message: String
    var richType: String
    var contentType: String
    var size: Int
    var target: String
    var createdAt: Int64

    init(_ record: RichNotification) {
        id = String(record.id)
        message = record.message
        richType = record.richType.rawValue
        contentType = record.contentType
        size = record.payloadSize
        target = record.target
        createdAt = record.createdAt
    }
}

struct ListView: Codable {
    var notifications: [SummaryView]
    var nextCursor: String?
}

struct StatusView: Codable {
    var id: String
    var state: String
    var counts: [String: Int]
    var devices: [NotificationStatus.Device]
    var notification: SummaryView

    init(_ status: NotificationStatus, record: RichNotification) {
        id = String(status.id)
        state = status.state.rawValue
        counts = status.counts
        devices = status.devices
        notification = SummaryView(record)
    }
}
