/// Someone who may call the API.
public struct User: Sendable, Hashable, Codable {
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// Registers own devices, sends to own tag, reads own notifications.
        case user
        /// May also send to any tag or tag expression.
        case admin
    }

    public var name: String
    public var role: Role

    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }

    /// Checks a user name: 1 to 64 characters of letters, digits and `_ . @ -` (it becomes a tag).
    public static func validate(name: String) -> String? {
        guard (1...64).contains(name.count) else { return "user name must be 1 to 64 characters long" }
        let allowed = name.unicodeScalars.allSatisfy { ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) || "_.@-".unicodeScalars.contains($0) }
        return allowed ? nil : "user name may only hold letters, digits and _ . @ -"
    }
}
