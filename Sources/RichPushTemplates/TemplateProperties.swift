/// The properties of one send, looked up without regard to case as Notification Hubs does:
/// `Title` fills `$(title)`. Build it once per send (or per locale) and render every device's
/// templates with it; the names are folded here, not per look-up.
package struct TemplateProperties: Sendable, Hashable {
    /// Values by name folded to lower case.
    let storage: [String: String]

    /// Refuses two names that differ only in case (`Title` and `title`): which one a template
    /// would get is not something a sender should have to guess.
    package init(_ properties: [String: String]) throws(TemplateRenderError) {
        var storage = [String: String](minimumCapacity: properties.count)
        var written = [String: String](minimumCapacity: properties.count)
        for (name, value) in properties {
            let key = ExpressionSyntax.fold(name)
            if let other = written.updateValue(name, forKey: key) {
                let pair = [name, other].sorted()
                throw TemplateRenderError(
                    .ambiguousProperty, "the properties '\(pair[0])' and '\(pair[1])' differ only in case; names are not case-sensitive",
                    property: pair[0], pointer: "")
            }
            storage[key] = value
        }
        self.storage = storage
    }

    init(folded storage: [String: String]) {
        self.storage = storage
    }

    /// No properties at all.
    package static let none = TemplateProperties(folded: [:])

    /// The value named `name`, in any case.
    package subscript(name: String) -> String? {
        storage[ExpressionSyntax.fold(name)]
    }

    package var count: Int { storage.count }
}
