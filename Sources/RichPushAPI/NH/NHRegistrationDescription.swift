import Foundation
import RichPushCore
import RichPushNH
import RichPushReport

/// A registration as Notification Hubs' clients write it (an Atom entry holding an
/// `AppleRegistrationDescription`, `AppleTemplateRegistrationDescription`, `FcmV1…`, `Gcm…` or
/// `Browser…`, or the .NET SDK's `RegistrationDescription` with `i:type`), read into an
/// ``Installation`` of the hub (a template registration is an installation with that one
/// template), and an installation written back as the entry NH answers with.
enum NHRegistrationDescription {
    struct Kind: Sendable, Hashable {
        /// The description's element name without `RegistrationDescription`: `Apple`, `FcmV1Template`, …
        let name: String
        let platform: Platform
        let template: Bool

        var element: String { name + "RegistrationDescription" }
        /// The element naming the device's address (a browser's is `Endpoint`, with `P256DH` and `Auth`).
        var handleField: String {
            switch platform {
            case .apns: "DeviceToken"
            case .gcm: "GcmRegistrationId"
            case .fcm: "FcmV1RegistrationId"
            default: "Endpoint"
            }
        }
    }

    static let kinds: [Kind] = [(Platform.apns, "Apple"), (.gcm, "Gcm"), (.fcm, "FcmV1"), (.webpush, "Browser")].flatMap { platform, name in
        [Kind(name: name, platform: platform, template: false), Kind(name: name + "Template", platform: platform, template: true)]
    }

    /// A template registration's template name when it gives none.
    static let defaultTemplateName = "template"

    /// The installation an entry describes, for registration `id`.
    static func installation(_ entry: NHXMLElement, id: String, updatedAt: Int64) throws -> Installation {
        guard entry.name == "entry", let description = entry.child("content")?.children.first else {
            throw NHError.badRequest("the body must be an Atom entry whose content is a registration description")
        }
        return try installation(description: description, id: id, updatedAt: updatedAt)
    }

    /// The installation a registration description (an entry's content) describes, for registration `id`.
    static func installation(description: NHXMLElement, id: String, updatedAt: Int64) throws -> Installation {
        var name = description.name
        if name == "RegistrationDescription" {
            // The .NET SDK writes the base type with the concrete one as `i:type`.
            let type = description.attributes.first { NHXML.localName($0.key) == "type" }?.value ?? ""
            name = NHXML.localName(type)
        }
        let served = kinds.map(\.element).joined(separator: ", ")
        guard let kind = kinds.first(where: { $0.element == name }) else {
            throw NHError(status: 400, code: "UnsupportedRegistration", message: "'\(name.prefix(64))' is not served; served: \(served)")
        }
        func field(_ name: String) -> String? {
            guard let element = description.child(name),
                element.attributes.first(where: { NHXML.localName($0.key) == "nil" })?.value != "true"
            else { return nil }
            let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
        if let given = field("RegistrationId"), given != id {
            throw NHError.badRequest("RegistrationId must be the id in the URL, '\(id)'")
        }
        if field("PushVariables") != nil { throw unsupported("PushVariables") }
        var tags = Set<String>()
        for tag in (field("Tags") ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) })
        where !tag.isEmpty {
            do { try TagExpression.validate(tag: tag) } catch { throw NHError.badRequest(error.message) }
            tags.insert(tag)
        }
        guard tags.count <= RegistrationRoutes.maxTags else {
            throw NHError.badRequest("a registration carries up to \(RegistrationRoutes.maxTags) tags")
        }
        guard let handle = field(kind.handleField) else { throw NHError.badRequest("\(kind.element) needs \(kind.handleField)") }
        var keys: WebPushKeys?
        if kind.platform == .webpush {
            guard let p256dh = field("P256DH"), let auth = field("Auth") else {
                throw NHError.badRequest("\(kind.element) needs Endpoint, P256DH and Auth")
            }
            let channel: JSONValue = .object(["endpoint": .string(handle), "p256dh": .string(p256dh), "auth": .string(auth)])
            keys = try RegistrationRoutes.handle(["pushChannel": channel], platform: .webpush).keys
        } else if let problem = PushHandle.problem(with: handle, platform: kind.platform) {
            throw NHError.badRequest("\(kind.handleField): \(problem)")
        }
        var templates: [InstallationTemplate] = []
        if kind.template {
            guard let body = field("BodyTemplate") else { throw NHError.badRequest("\(kind.element) needs BodyTemplate") }
            var headers: [String: String] = [:]
            for header in description.child("ApnsHeaders")?.children ?? [] where header.name == "ApnsHeader" {
                guard let name = header.child("Header")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
                    let value = header.child("Value")?.text
                else {
                    throw NHError.badRequest("an ApnsHeader has a Header and a Value")
                }
                headers[name] = value
            }
            if let priority = field("Priority") { headers["apns-priority"] = priority }
            let templateName = field("TemplateName") ?? defaultTemplateName
            var entry: [String: JSONValue] = ["Body": .string(body)]
            if !headers.isEmpty { entry["Headers"] = .object(headers.mapValues(JSONValue.string)) }
            if let expiry = field("Expiry") { entry["Expiry"] = .string(expiry) }
            guard InstallationTemplate.isValidName(templateName) else {
                throw NHError.badRequest("TemplateName is 1 to 64 ASCII letters, digits, '_', '-' or '.'")
            }
            var template = try RegistrationRoutes.template(templateName, .object(entry), platform: kind.platform)
            template.missing = .empty
            templates = [template]
        }
        return Installation(
            id: id, platform: kind.platform, handle: handle, tags: tags.sorted(), owner: NHInstallationDocument.hubOwner,
            updatedAt: updatedAt, webPushKeys: keys, templates: templates)
    }

    /// The registration's version, NH's ETag: its last change, in ms.
    static func etag(_ installation: Installation) -> String { String(installation.updatedAt) }

    /// Whether an `If-Match` allows a change of `installation` (none, `*`, or its ETag, quoted,
    /// weak or not, as the SDKs send it).
    static func matches(_ ifMatch: String?, _ installation: Installation?) -> Bool {
        guard let ifMatch else { return true }
        var tag = ifMatch.trimmingCharacters(in: .whitespacesAndNewlines)
        if tag.hasPrefix("W/") { tag.removeFirst(2) }
        tag = tag.trimmingCharacters(in: ["\""])
        if tag == "*" { return installation != nil }
        return installation.map { etag($0) == tag } ?? false
    }

    /// The kind an installation shows as (its first template, if any); nil for a platform NH's
    /// registrations do not have here.
    static func kind(of installation: Installation) -> Kind? {
        kinds.first { $0.platform == installation.platform && $0.template == !installation.templates.isEmpty }
    }

    /// The Atom entry NH answers for a registration, its elements in the order the .NET SDK reads.
    static func entry(_ installation: Installation, kind: Kind, url: String) -> String {
        let updated = UTCTimestamp.iso8601(milliseconds: installation.updatedAt)
        var xml = #"<entry a:etag="W/&quot;\#(etag(installation))&quot;" xmlns="http://www.w3.org/2005/Atom" "#
        xml += #"xmlns:a="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">"#
        xml += "<id>\(url.markupEscaped)</id><title type=\"text\">\(installation.id.markupEscaped)</title>"
        xml += "<published>\(updated)</published><updated>\(updated)</updated><link rel=\"self\" href=\"\(url.markupEscaped)\"/>"
        xml += #"<content type="application/xml">"#
        xml += description(installation, kind: kind, template: installation.templates.first)
        return xml + "</content></entry>"
    }

    /// The registration description alone (what an entry's content holds, and a line of NH's bulk
    /// export): `installation` as a registration of `kind`, with `template` when `kind` is one.
    static func description(
        _ installation: Installation, kind: Kind, template: InstallationTemplate?, id: String? = nil
    ) -> String {
        var xml = #"<\#(kind.element) xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" "#
        xml += #"xmlns:i="http://www.w3.org/2001/XMLSchema-instance">"#
        xml += element("ETag", etag(installation)) + element("ExpirationTime", NHInstallationDocument.never)
        xml += element("RegistrationId", id ?? installation.id)
        xml += element("Tags", installation.tags.joined(separator: ","))
        xml += element(kind.handleField, installation.handle)
        if let keys = installation.webPushKeys { xml += element("P256DH", keys.p256dh) + element("Auth", keys.auth) }
        if kind.template, let template {
            xml += element("BodyTemplate", template.body) + element("TemplateName", template.name)
            if let expiry = template.expiry { xml += element("Expiry", expiry) }
            if kind.platform == .apns, !template.headers.isEmpty {
                xml += "<ApnsHeaders>"
                for (name, value) in template.headers.sorted(by: { $0.key < $1.key }) {
                    xml += "<ApnsHeader>" + element("Header", name) + element("Value", value) + "</ApnsHeader>"
                }
                xml += "</ApnsHeaders>"
            }
        }
        return xml + "</\(kind.element)>"
    }

    static func element(_ name: String, _ value: String) -> String { "<\(name)>\(value.markupEscaped)</\(name)>" }
    static func unsupported(_ what: String) -> NHError {
        NHError(status: 400, code: "UnsupportedField", message: "\(what) is not served (docs/nh.md); leave it out")
    }
}
