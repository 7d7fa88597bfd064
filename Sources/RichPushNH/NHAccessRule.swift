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

    /// Whether the rule grants `right` (Manage grants all three).
    package func allows(_ right: NHRight) -> Bool { rights.contains(right) || rights.contains(.manage) }
}
