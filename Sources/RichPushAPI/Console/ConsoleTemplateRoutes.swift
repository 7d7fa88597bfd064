import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore
import RichPushStorage
import RichPushTemplates

/// `/console/templates`: a template rendered with properties for a locale, by the API's own
/// preview (``TemplateRoutes/render(_:)``: the same parser, bounds, answers and errors as
/// `POST /api/templates/render`). Nothing is written. The form is a POST, because a template and
/// its properties are kilobytes (too long for a URL, and kept out of history and access logs);
/// a POST passes the same-origin check like every console form, so another site cannot submit
/// its own template into a signed-in console. Read-only consoles and viewers may preview.
struct ConsoleTemplateRoutes: Sendable {
    /// Longest template body (an installation's bodies together are at most 16 KiB).
    static let maxTemplateBytes = 8 * 1024
    /// Longest properties text, and deepest nesting of it (a property is text, or locales to text).
    static let maxPropertiesBytes = 16 * 1024
    static let maxDepth = 4
    /// The form's bytes: both bodies percent-encoded (a JSON byte can take three) and the rest.
    static let maxFormBytes = 3 * (maxTemplateBytes + maxPropertiesBytes) + 1024

    let routes: ConsoleRoutes

    func add(to console: RouterGroup<APIRequestContext>) {
        console.get("templates") { request, _ in
            let session = try await routes.session(request)
            return page(session, ConsoleTemplatePage.html(form: try ConsoleForm.query(of: request), result: nil, problem: nil))
        }
        console.post("templates") { request, context in
            let session = try await routes.session(request)
            try routes.guardian.checkSameOrigin(request, context: context)
            let form = try await ConsoleForm.body(of: request, maxBytes: Self.maxFormBytes, maxValueBytes: Self.maxPropertiesBytes)
            let html = ConsolePage.wantsHTML(request)
            do {
                let body = try await Self.requestBody(form, access: session.access, installations: routes.backend.installations)
                let (locale, output) = try TemplateRoutes.render(body)
                if !html {
                    return JSONResponse.written(
                        TemplateRoutes.answer(locale: locale, output), status: .ok, headers: ConsolePage.securityHeaders)
                }
                return page(session, ConsoleTemplatePage.html(form: form, result: (locale, output), problem: nil))
            } catch let error as APIError where html && [.badRequest, .unprocessableContent, .notFound].contains(error.status) {
                return page(session, ConsoleTemplatePage.html(form: form, result: nil, problem: error.message), status: error.status)
            }
        }
    }

    func page(_ session: ConsoleSession, _ body: HTML, status: HTTPResponse.Status = .ok) -> Response {
        ConsolePage.response(
            ConsolePage.layout(title: "Template preview", session: session, readOnly: routes.configuration.readOnly, body: body),
            status: status)
    }

    /// The form as the API's request body: `template` (or `installation` and `name`: that
    /// registration's template, with its missing policy and defaults), `properties` (a JSON
    /// object), `locale`, `defaultLocale`, `missing`. Each bound a 400 naming the field.
    static func requestBody(
        _ form: ConsoleForm, access: ConsoleAccess,
        installations: @Sendable (AppID) -> RedisInstallationStore
    ) async throws -> [UInt8] {
        let app = try ConsoleScope.app(form, access: access)
        var object: [String: Any] = [:]
        let text = form.fields.first { $0.name == "template" }?.value ?? ""
        if let id = form["installation"] {
            guard text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw APIError.badRequest(
                    "give a template or an installation's template (installation and name), not both", code: "bad_template_source")
            }
            guard id.utf8.count <= 128, let name = form["name"], name.utf8.count <= 64 else {
                throw APIError.badRequest(
                    "installation (up to 128 bytes) needs name, its template's name (up to 64 bytes)", code: "bad_template_source")
            }
            guard let device = try await installations(app).installation(id: id) else {
                throw APIError(.notFound, code: "installation_not_found", message: "app \(app.rawValue) has no installation \(id)")
            }
            guard let template = device.templates.first(where: { $0.name == name }) else {
                throw APIError(.notFound, code: "template_not_found", message: "installation \(id) has no template named \(name)")
            }
            object["template"] = template.body
            object["missing"] = template.missing.rawValue
            if !template.defaults.isEmpty { object["defaults"] = template.defaults }
        } else {
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw APIError.badRequest(
                    "template: write a template body, or give an installation and its template's name", code: "missing_field")
            }
            guard text.utf8.count <= maxTemplateBytes else {
                throw APIError.badRequest("template: at most \(maxTemplateBytes) bytes", code: "field_too_long")
            }
            object["template"] = text
        }
        if let properties = form["properties"] {
            guard depth(properties) <= maxDepth,
                let parsed = try? JSONSerialization.jsonObject(with: Data(properties.utf8)), parsed is [String: Any]
            else {
                throw APIError.badRequest(
                    "properties: a JSON object of names to text (or to locales' text), nested at most \(maxDepth) deep",
                    code: "bad_properties")
            }
            object["properties"] = parsed
        }
        for field in ["locale", "defaultLocale"] {
            guard let value = form[field] else { continue }
            guard value.utf8.count <= 64 else { throw APIError.badRequest("\(field): at most 64 bytes", code: "field_too_long") }
            object[field] = value
        }
        if let missing = form["missing"], form["installation"] == nil { object["missing"] = missing }
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    /// How deep `text`'s arrays and objects nest (outside strings), counted before parsing so a
    /// deep text is refused without recursion.
    static func depth(_ text: String) -> Int {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for byte in text.utf8 {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest
    }
}
