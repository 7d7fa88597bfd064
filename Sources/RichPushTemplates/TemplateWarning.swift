/// Something a render did that the sender may want to know (the preview shows them): a value
/// clipped, a default used, a property missing and written empty.
package struct TemplateWarning: Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// `$(prop, n)` or `.(prop, n)` clipped the value.
        package static let truncated = Code("truncated")
        /// The property came from the fallback defaults.
        package static let defaultUsed = Code("default_used")
        /// The property was missing and written as an empty string (``MissingPropertyPolicy/empty``).
        package static let missingProperty = Code("missing_property")
    }

    package let code: Code
    /// The property, as the template wrote it.
    package let property: String
    /// The RFC 6901 pointer of the string value.
    package let pointer: String
    /// For ``Code/truncated``, the `n` the value was clipped to.
    package let limit: Int?

    package init(_ code: Code, property: String, pointer: String, limit: Int? = nil) {
        self.code = code
        self.property = property
        self.pointer = pointer
        self.limit = limit
    }

    /// Written when asked for, not per render.
    package var message: String {
        switch code {
        case .truncated: "the value of '\(property)' was clipped to \(limit ?? 0) characters"
        case .defaultUsed: "the property '\(property)' is missing; its default was used"
        default: "the property '\(property)' is missing and was written as an empty string"
        }
    }

    package var description: String { "\(message) (at \(pointer))" }
}
