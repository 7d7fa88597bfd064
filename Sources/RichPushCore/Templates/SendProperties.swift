/// The properties of a template send (`POST /api/notifications` `"properties"`), in the order
/// given: a property is text, or an object of locales (`{"en": "…", "fr-CA": "…"}`) of which each
/// device gets its own (``values(for:)``). Stored with the notification as ``json``.
package struct SendProperties: Sendable, Hashable {
    package enum Value: Sendable, Hashable {
        case text(String)
        /// By normalised locale (``LocaleTag``), in the order given.
        case localized([Localized])
    }

    package struct Localized: Sendable, Hashable {
        package let locale: String
        package let text: String
    }

    package struct Property: Sendable, Hashable {
        package let name: String
        package let value: Value
    }

    package let properties: [Property]
    /// The app's default locale when the send was accepted (`richpush apps set --default-locale`),
    /// the third step of the locale chain; stored beside the properties (not in ``json``).
    package var defaultLocale: String?

    /// Most properties one send carries, locales per property, and bytes of all names and values.
    package static let maxCount = 64
    package static let maxLocales = 16
    package static let maxBytes = 16 * 1024

    package init(_ properties: [Property], defaultLocale: String? = nil) {
        self.properties = properties
        self.defaultLocale = defaultLocale
    }

    package var isEmpty: Bool { properties.isEmpty }

    /// The properties object in `bytes` (a request's member or as stored), in order: text (a
    /// number or a boolean as written), or an object of locales to text; throws what is wrong.
    package static func parse(json bytes: [UInt8]) throws(SendPropertiesError) -> SendProperties {
        guard bytes.count <= 4 * maxBytes, let members = JSONReader.layeredMembers(of: bytes) else {
            throw SendPropertiesError(
                "'properties' must be a JSON object of names to text or to objects of locales ({\"en\": \"Hi\", \"fr\": \"Salut\"})")
        }
        guard members.count <= maxCount else {
            throw SendPropertiesError("'properties' holds \(members.count) properties; at most \(maxCount)")
        }
        var bytes = 0
        var properties: [Property] = []
        var folded = Set<String>()
        for (name, value) in members {
            guard InstallationTemplate.isValidName(name) else {
                throw SendPropertiesError("property name '\(name.prefix(64))' must be 1 to 64 ASCII letters, digits, '_', '-' or '.'")
            }
            guard folded.insert(name.lowercased()).inserted else {
                throw SendPropertiesError("two properties are named '\(name)' (names are not case-sensitive)")
            }
            bytes += name.utf8.count
            switch value {
            case .object(let members):
                guard (1...maxLocales).contains(members.count) else {
                    throw SendPropertiesError("property '\(name)' must give 1 to \(maxLocales) locales")
                }
                var locales: [Localized] = []
                for (key, text) in members {
                    guard let locale = LocaleTag(key) else {
                        throw SendPropertiesError("property '\(name)': '\(key.prefix(40))' is not a BCP 47 locale (en, fr-CA)")
                    }
                    guard let text = Self.text(text) else {
                        throw SendPropertiesError("property '\(name)': the value for '\(key)' must be text")
                    }
                    guard !locales.contains(where: { $0.locale == locale.identifier }) else {
                        throw SendPropertiesError("property '\(name)' gives the locale \(locale) twice")
                    }
                    locales.append(Localized(locale: locale.identifier, text: text))
                    bytes += locale.identifier.utf8.count + text.utf8.count
                }
                properties.append(Property(name: name, value: .localized(locales)))
            case .scalar(let scalar):
                guard let text = Self.text(scalar) else {
                    throw SendPropertiesError("property '\(name)' must be text, a number, a boolean, or an object of locales to text")
                }
                bytes += text.utf8.count
                properties.append(Property(name: name, value: .text(text)))
            }
            guard bytes <= maxBytes else { throw SendPropertiesError("'properties' is over \(maxBytes) bytes of names and values") }
        }
        return SendProperties(properties)
    }

    /// The bytes of the member `name` (any case) of the JSON object `body`; nil when absent or null.
    package static func member(_ name: String, of body: [UInt8]) -> [UInt8]? {
        guard let members = JSONReader.rawMembers(of: body, depth: 32),
            let value = members.first(where: { $0.name.lowercased() == name.lowercased() })?.value
        else { return nil }
        let bytes = Array(value)
        return bytes == Array("null".utf8) ? nil : bytes
    }

    /// The properties as stored: a JSON object, in order.
    package var json: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        for property in properties {
            switch property.value {
            case .text(let text):
                writer.field(property.name, text)
            case .localized(let locales):
                writer.key(property.name)
                writer.beginObject()
                for locale in locales { writer.field(locale.locale, locale.text) }
                writer.endObject()
            }
        }
        writer.endObject()
        return writer.bytes
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .number(let number): number
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}

/// Why a send's `properties` cannot be used.
package struct SendPropertiesError: Error, Sendable, Hashable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
