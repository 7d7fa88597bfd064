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
    package let message: String

    package init(_ code: Code, property: String, pointer: String, message: String) {
        self.code = code
        self.property = property
        self.pointer = pointer
        self.message = message
    }

    package var description: String { "\(message) (at \(pointer))" }
}
