import Hummingbird
import RichPushCore
import RichPushTemplates

/// `POST /api/templates/render`: a template rendered with a send's properties for one locale,
/// nothing sent (the preview Notification Hubs does not have). Compiled and rendered exactly as a
/// registration and a send would: the same errors, and the warnings a render gives.
struct TemplateRoutes {
    static let fields = ["template", "properties", "locale", "defaultLocale", "missing", "defaults"]
    static let maxBodyBytes = 64 * 1024

    static func add(to group: RouterGroup<APIRequestContext>) {
        group.post("templates/render") { try await TemplateRoutes().render($0, context: $1) }
    }

    @Sendable func render(_ request: Request, context: APIRequestContext) async throws -> Response {
        // A sender (send) or a reader (read) may preview.
        _ = try context.caller(context.apiKey?.allows(.send) == true ? .send : .read)
        let body = Array(buffer: try await request.body.collect(upTo: Self.maxBodyBytes))
        return JSONResponse.written(try Self.rendered(body), status: .ok)
    }

    /// The answer's JSON for a request body: the route's whole work after the caller's check,
    /// which the console's template preview calls too (one code path, the same answers and errors).
    static func rendered(_ body: [UInt8]) throws -> [UInt8] {
        let (chosen, output) = try render(body)
        return answer(locale: chosen, output)
    }

    /// A request body's template rendered: the locale chosen (nil: none matched) and the output.
    static func render(_ body: [UInt8]) throws -> (locale: String?, output: RenderedTemplate) {
        let object = try JSONObjectBody.members(
            ByteBuffer(bytes: body), allowed: Self.fields,
            shape: "{\"template\", \"properties\", \"locale\", \"defaultLocale\", \"missing\", \"defaults\"}")
        guard let source = object["template"]?.string else {
            throw APIError.badRequest("'template' (the body, a string) is required", code: "missing_field")
        }
        let template: Template
        do {
            template = try Template(source)
        } catch {
            throw APIError.badRequest(
                "\(error.code): \(error.message) (at pointer '\(error.pointer)', line \(error.location.line), column \(error.location.column))",
                code: "invalid_template")
        }
        var properties = try SendProperties.member("properties", of: body).map(NotificationInput.parseProperties) ?? SendProperties([])
        let locale = try RegistrationRoutes.locale(object["locale"])
        // The app's default locale as a send would take it (the chain's third step).
        properties.defaultLocale = try RegistrationRoutes.locale(object["defaultLocale"])
        let (values, chosen) = properties.values(for: locale)
        let policy = try Self.policy(object["missing"], defaults: object["defaults"])
        let output: RenderedTemplate
        do throws(TemplateRenderError) {
            output = try template.render(try TemplateProperties(values), missing: policy)
        } catch {
            throw APIError.unprocessable("\(error.message)", code: error.code.rawValue)
        }
        return (chosen, output)
    }

    /// The route's answer: `{"locale", "output", "warnings"}`.
    static func answer(locale chosen: String?, _ output: RenderedTemplate) -> [UInt8] {
        var json = JSONWriter(capacity: output.bytes.count + 128)
        json.beginObject()
        if let chosen { json.field("locale", chosen) }
        json.key("output")
        json.raw(output.bytes)
        json.key("warnings")
        json.raw(Array("[".utf8) + Array(output.warnings.map(Self.json).joined(separator: [UInt8(ascii: ",")])) + Array("]".utf8))
        json.endObject()
        return json.bytes
    }

    static func json(_ warning: TemplateWarning) -> [UInt8] {
        var json = JSONWriter(capacity: 128)
        json.beginObject()
        json.field("code", warning.code.rawValue)
        json.field("message", warning.message)
        json.field("pointer", warning.pointer)
        json.field("property", warning.property)
        json.endObject()
        return json.bytes
    }

    /// `missing` (`fallback`, the default, `fail`, or NH's `empty`) with `defaults`.
    static func policy(_ missing: JSONValue?, defaults: JSONValue?) throws -> MissingPropertyPolicy {
        var values: [String: String] = [:]
        if let defaults, defaults != .null {
            guard case .object(let members) = defaults, members.count <= SendProperties.maxCount,
                members.values.allSatisfy({ $0.string.map { $0.utf8.count <= SendProperties.maxBytes } ?? false })
            else {
                throw APIError.badRequest("'defaults' is an object of up to \(SendProperties.maxCount) names to text", code: "wrong_type")
            }
            values = members.compactMapValues(\.string)
        }
        switch missing?.string ?? (missing == nil || missing == .null ? "fallback" : "") {
        case "fallback":
            do { return .fallback(try TemplateProperties(values)) } catch {
                throw APIError.badRequest(error.message, code: "invalid_properties")
            }
        case "fail": return .fail
        case "empty": return .empty
        default: throw APIError.badRequest("'missing' is fallback, fail or empty", code: "wrong_type")
        }
    }
}
