/// One named template an installation registered (Azure Notification Hubs' `"Templates":
/// {"name": {"Body", "Headers", "Tags"}}`), as stored: the body's text, compiled by the API when
/// it is registered and by the worker once per batch (``RichPushTemplates`` holds the language).
package struct InstallationTemplate: Sendable, Hashable, Codable {
    /// What a render does when the send lacks a property the body names.
    package enum MissingPolicy: String, Sendable, Hashable, Codable, CaseIterable {
        /// The locale chain, then the template's `Defaults`; a property in neither fails the device.
        case fallback
        /// The device fails with reason `template_missing_property`.
        case fail
        /// The property reads as an empty string: Notification Hubs' rule, which templates
        /// registered through its interface follow.
        case empty
    }

    /// The template's name (NH's key in `Templates`): 1 to 64 letters, digits, `_`, `-`, `.`.
    package var name: String
    /// The payload body in NH's expression language.
    package var body: String
    /// Platform headers the template asks for (NH's `Headers`), kept and shown; bounded.
    package var headers: [String: String]
    /// NH's per-template tags, kept and shown.
    package var tags: [String]
    package var missing: MissingPolicy
    /// Values for properties a send leaves out (the `fallback` policy).
    package var defaults: [String: String]
    /// NH's `Expiry` (``TemplateExpiry``): a W3C date-time, or an expression giving one; nil: none.
    package var expiry: String?

    package init(
        name: String, body: String, headers: [String: String] = [:], tags: [String] = [], missing: MissingPolicy = .fallback,
        defaults: [String: String] = [:], expiry: String? = nil
    ) {
        self.name = name
        self.body = body
        self.headers = headers
        self.tags = tags
        self.missing = missing
        self.defaults = defaults
        self.expiry = expiry
    }

    /// Most templates one installation carries.
    package static let maxPerInstallation = 8
    /// Most bytes of all of an installation's bodies together.
    package static let maxBodyBytesPerInstallation = 16 * 1024
    /// Most headers, tags or defaults per template, and the longest name, header or tag.
    package static let maxEntries = 16
    package static let maxNameLength = 64
    package static let maxValueBytes = 256

    /// Whether `name` may name a template.
    package static func isValidName(_ name: String) -> Bool {
        (1...maxNameLength).contains(name.utf8.count)
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0))
            }
    }
}
