/// An app's id: a slug of 2 to 32 lowercase letters, digits and `-`, starting with a letter and
/// not ending with `-` (`shop`, `news-beta`). `default` is the app every deployment has: what was
/// written before apps existed belongs to it, under the key names it had then.
///
/// Every user, key, installation, tag, notification, payload, quota and dead letter belongs to
/// exactly one app (see `StorageKeys`); a request names its app with the Basic user name
/// `alice@shop` or an API key made in that app (see docs/apps.md).
package struct AppID: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let rawValue: String

    /// The app a deployment has from the start; it cannot be created or removed.
    package static let `default` = AppID(unchecked: "default")

    /// Nil with the reason when `text` is not a valid id.
    package static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (2...32).contains(bytes.count) else { return "an app id is 2 to 32 characters, got \(bytes.count)" }
        guard let first = bytes.first, (0x61...0x7A).contains(first) else { return "an app id starts with a lowercase letter" }
        guard bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
            return "an app id has only lowercase letters, digits and '-'"
        }
        guard bytes.last != 0x2D else { return "an app id does not end with '-'" }
        return nil
    }

    /// Nil when `text` is not a valid id.
    package init?(validating text: some StringProtocol) {
        let text = String(text)
        guard Self.problem(text) == nil else { return nil }
        rawValue = text
    }

    package init(unchecked text: String) { rawValue = text }

    package var isDefault: Bool { rawValue == "default" }

    /// How a user or API key of this app is named where every app's names meet (the API's
    /// credential caches and their change announcements): the name itself in the default app,
    /// `<app>/<name>` in another (no user name or key id holds `/`).
    package func credentialName(_ name: String) -> String { isDefault ? name : "\(rawValue)/\(name)" }

    /// The app of a ``credentialName(_:)``.
    package static func of(credentialName name: String) -> AppID {
        guard let slash = name.firstIndex(of: "/") else { return .default }
        return AppID(validating: name[..<slash]) ?? .default
    }
    package var description: String { rawValue }
    package static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.rawValue < rhs.rawValue }
}
