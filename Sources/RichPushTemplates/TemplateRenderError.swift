/// Why a template could not be rendered for one send: a device fails with it
/// (`template_missing_property`), it is never worth a retry.
package struct TemplateRenderError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The template needs a property the send (and the defaults) do not have.
        package static let missingProperty = Code("template_missing_property")
        /// Two properties of the send differ only in case.
        package static let ambiguousProperty = Code("ambiguous_property")
    }

    package let code: Code
    package let message: String
    /// The property at fault, as the template (or the send) wrote it.
    package let property: String
    /// The RFC 6901 pointer of the string value that needed it; `""` when not about one.
    package let pointer: String

    package init(_ code: Code, _ message: String, property: String, pointer: String) {
        self.code = code
        self.message = message
        self.property = property
        self.pointer = pointer
    }

    package var description: String { message }
}
