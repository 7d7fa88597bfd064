/// A template rendered for one device: the payload and what the render warns about.
package struct RenderedTemplate: Sendable, Hashable {
    /// The payload, a JSON object in UTF-8.
    package var bytes: [UInt8]
    package var warnings: [TemplateWarning]

    package init(bytes: [UInt8], warnings: [TemplateWarning]) {
        self.bytes = bytes
        self.warnings = warnings
    }

    package var text: String { String(decoding: bytes, as: UTF8.self) }
}
