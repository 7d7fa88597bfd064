/// Someone who may call the API.
package struct User: Sendable, Hashable, Codable {
    package enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// Registers own devices, sends to own tag, reads own notifications.
        case user
        /// May also send to any tag or tag expression.
        case admin
    }

    package var name: String
    package var role: Role

    package init(name: String, role: Role) {
        self.name = name
        self.role = role
    }

    /// Checks a user name: 1 to 64 characters of letters, digits and `_ . @ -` (it becomes a tag).
    package static func validate(name: String) -> String? {
        guard (1...64).contains(name.count) else { return "user name must be 1 to 64 characters long" }
        // ASCII letters, digits and four marks, checked byte by byte (every request's Basic
        // credentials pass here).
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
        return allowed ? nil : "user name may only hold letters, digits and _ . @ -"
    }
}
