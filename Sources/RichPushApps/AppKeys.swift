import RichPushCore

/// Where apps live in Redis: one hash per app and the set of ids, under one hash tag so a script
/// may touch both on Redis Cluster; changes are announced on one channel.
package struct AppKeys: Sendable, Hashable {
    package let prefix: String

    package init(prefix: String = "richpush") { self.prefix = prefix }

    func app(_ id: AppID) -> String { "\(prefix):{apps}:app:\(id.rawValue)" }
    var all: String { "\(prefix):{apps}:all" }
    /// Where a change to an app is published (its id), so every worker reloads it at once.
    package var changes: String { "\(prefix):apps:changed" }
}
