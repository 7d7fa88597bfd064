import Crypto
import Foundation

/// One shared-access authorization rule of a hub (an app): its name (`skn` in tokens), its
/// primary and secondary keys (either signs; rotating one leaves the other working) and its
/// rights. The keys are used as their text, as NH's clients sign with them: base64 of 32 random
/// bytes when RichPush makes them.
package struct NHAccessRule: Sendable, Hashable, Codable {
    package var name: String
    package var primaryKey: String
    package var secondaryKey: String
    package var rights: Set<NHRight>

    package init(name: String, primaryKey: String, secondaryKey: String, rights: Set<NHRight>) {
        self.name = name
        self.primaryKey = primaryKey
        self.secondaryKey = secondaryKey
        self.rights = rights
    }

    /// A rule with two new keys.
    package static func generate(name: String, rights: Set<NHRight>) -> NHAccessRule {
        NHAccessRule(name: name, primaryKey: newKey(), secondaryKey: newKey(), rights: rights)
    }

    /// A new key as NH makes them: base64 of 32 random bytes.
    package static func newKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// The two rules a new hub has: one for devices (Listen), one for the backend (all rights).
    package static func defaults() -> [NHAccessRule] {
        [
            generate(name: "DefaultListenSharedAccessSignature", rights: [.listen]),
            generate(name: "DefaultFullSharedAccessSignature", rights: [.listen, .manage, .send]),
        ]
    }

    /// Whether the rule grants `right` (Manage grants all three).
    package func allows(_ right: NHRight) -> Bool { rights.contains(right) || rights.contains(.manage) }

    /// Which key of a rule.
    package enum Key: String, Sendable, CaseIterable {
        case primary, secondary
    }

    /// The rule with `key` replaced by a new one (the other keeps working meanwhile).
    package func rotating(_ key: Key) -> NHAccessRule {
        var rule = self
        switch key {
        case .primary: rule.primaryKey = Self.newKey()
        case .secondary: rule.secondaryKey = Self.newKey()
        }
        return rule
    }

    /// Most rules a hub holds (NH allows 12).
    package static let maxRules = 12

    /// Nil when the rule can be stored: a name of 1 to 256 letters, digits, `.`, `-` and `_`;
    /// keys of 32 to 128 printable ASCII characters without spaces, `;` or `&` (they go into
    /// connection strings); at least one right, and Manage only with Listen and Send (NH's rule).
    package var problem: String? {
        let nameBytes = Array(name.utf8)
        guard (1...256).contains(nameBytes.count), nameBytes.allSatisfy(Self.isNameByte) else {
            return "rule name '\(name.prefix(40))' must be 1 to 256 letters, digits, '.', '-' or '_'"
        }
        for (which, key) in [("primary", primaryKey), ("secondary", secondaryKey)] {
            let bytes = Array(key.utf8)
            guard (32...128).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x3B && $0 != 0x26 }) else {
                return "rule \(name)'s \(which) key must be 32 to 128 printable characters without ';' or '&'"
            }
        }
        guard !rights.isEmpty else { return "rule \(name) needs at least one right (Listen, Send, Manage)" }
        if rights.contains(.manage), !rights.isSuperset(of: [.listen, .send]) {
            return "rule \(name): Manage goes with Listen and Send"
        }
        return nil
    }

    /// Nil when `rules` can be a hub's: each valid, names unique, at most ``maxRules``.
    package static func problem(with rules: [NHAccessRule]) -> String? {
        guard rules.count <= maxRules else { return "a hub has at most \(maxRules) rules" }
        if let problem = rules.lazy.compactMap(\.problem).first { return problem }
        guard Set(rules.map(\.name)).count == rules.count else { return "two rules have the same name" }
        return nil
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x2D
            || byte == 0x5F
    }
}
