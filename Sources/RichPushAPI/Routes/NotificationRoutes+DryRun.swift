import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// `POST /api/notifications?dryRun=true`: everything a send checks, the audience resolved as a
/// worker resolves it, and what each platform would get, with nothing stored, charged or sent.
extension NotificationRoutes {
    /// Candidates looked at, at most: past this the counts are over the first ones (`exact: false`).
    static let dryRunCandidates = 100_000

    struct DryRunView: Encodable {
        struct Audience: Encodable {
            var total: Int
            var platforms: [String: Int]
            /// False when more than `dryRunCandidates` installations were candidates.
            var exact: Bool
        }

        struct Payload: Encodable {
            var platform: String
            var format: String
            var bytes: Int
            var limit: Int
            var pushType: String
            var priority: Int
            var collapseId: String
            /// The payload as the platform would get it (for FCM, the message without its token).
            var payload: String
        }

        var dryRun = true
        var target: String
        /// The workers' default push mode, in which the payloads are rendered.
        var mode: String
        var audience: Audience
        var payloads: [Payload]
        /// A template send: what the templated devices would get, by group (nil: no properties).
        var templates: [TemplatePreview]?
        var templatesLeftOut: Int?
        var lint: [String]
    }

    static func isDryRun(_ request: Request) throws -> Bool {
        guard let value = request.uri.queryParameters.get("dryRun") else { return false }
        switch value {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.badRequest("'dryRun' must be true or false", code: "bad_dry_run")
        }
    }

    func dryRun(_ draft: NotificationDraft) async throws -> Response {
        let expression: TagExpression
        do {
            expression = try TagExpression(parsing: draft.target)
        } catch {
            throw APIError.unprocessable("bad target: \(error.message)", code: "bad_target")
        }
        // The candidates, as a worker finds them: the union of the candidate tags' sets.
        let sources: [String?] = expression.candidateTags.map { $0.sorted().map(Optional.some) } ?? [nil]
        var seen = Set<String>()
        let candidates = try await installations.installationIDs(tags: sources, pageSize: 1000).joined().filter { seen.insert($0).inserted }
        let looked = candidates.prefix(Self.dryRunCandidates)
        var platforms: [Platform: Int] = [:]
        var groups: [TemplateGroup: Int] = [:]
        for start in stride(from: looked.startIndex, to: looked.endIndex, by: 1000) {
            let chunk = Array(looked[start..<min(start + 1000, looked.endIndex)])
            for installation in try await installations.installations(ids: chunk) where expression.matches(Set(installation.tags)) {
                platforms[installation.platform, default: 0] += 1
                if draft.properties != nil, let template = installation.template(for: expression) {
                    let group = TemplateGroup(template: template, locale: installation.locale, platform: installation.platform)
                    // Bounded: past 10,000 distinct groups only those already seen are counted.
                    if groups.count < 10_000 || groups[group] != nil { groups[group, default: 0] += 1 }
                }
            }
        }
        // The payloads, rendered as the workers would (id 0: the notification does not exist).
        let notification = RichNotification(
            id: 0, message: draft.message, richType: draft.richType, contentType: draft.contentType, payloadHash: "",
            payloadSize: draft.payload.count, creator: draft.creator, target: draft.target,
            createdAt: Int64(Date().timeIntervalSince1970 * 1000), delivery: draft.delivery, properties: draft.properties)
        let renderer = PushRenderer()
        var payloads: [DryRunView.Payload] = []
        var lint: [String] = []
        let wanted = platforms.isEmpty ? [Platform.apns, .fcm] : platforms.keys.sorted { $0.rawValue < $1.rawValue }
        for platform in wanted {
            let format: PushFormat = platform == .fcm || platform == .gcm ? .fcm : .apns
            do {
                let rendered = try renderer.render(notification, format: format, collapseID: "0")
                let limit = format == .fcm ? PushRenderer.maxFCMDataBytes : PushRenderer.maxPayloadBytes
                payloads.append(
                    DryRunView.Payload(
                        platform: platform.rawValue, format: format.rawValue, bytes: rendered.payload.count, limit: limit,
                        pushType: rendered.pushType, priority: rendered.priority, collapseId: rendered.collapseID,
                        payload: String(decoding: rendered.payload, as: UTF8.self)))
                if rendered.payload.count > limit * 3 / 4 {
                    lint.append(
                        "the \(platform.rawValue) payload is \(rendered.payload.count) of \(limit) bytes: little room left for the message")
                }
            } catch {
                lint.append("\(platform.rawValue): \(error.message)")
            }
        }
        if platforms.isEmpty { lint.append("no installation matches \(draft.target): nothing would be sent") }
        if platforms[.apns] != nil && renderer.mode(for: notification) == .silent {
            lint.append(
                "iOS delivers background pushes at its own pace (a few an hour per app is what Apple allows for content-available pushes); time-critical news needs the alert mode"
            )
        }
        if draft.delivery.ttl == .zero { lint.append("ttl 0: a device that is offline at the moment of sending never gets this push") }
        var view = DryRunView(
            target: draft.target, mode: renderer.mode(for: notification).rawValue,
            audience: DryRunView.Audience(
                total: platforms.values.reduce(0, +),
                platforms: Dictionary(uniqueKeysWithValues: platforms.map { ($0.key.rawValue, $0.value) }),
                exact: candidates.count <= Self.dryRunCandidates),
            payloads: payloads, lint: lint)
        if let properties = draft.properties {
            (view.templates, view.templatesLeftOut) = Self.templatePreviews(
                groups, properties: properties, builtIns: renderer.builtInProperties(of: notification))
            if let failing = view.templates?.filter({ $0.error != nil }), !failing.isEmpty {
                view.lint.append("\(failing.map(\.devices).reduce(0, +)) templated devices would fail: \(failing[0].error ?? "")")
            }
        }
        return try JSONResponse.encode(view, status: .ok)
    }
}
