import Synchronization

/// The `app` label of a scope's series: its own name for the first ``limit`` scopes the process
/// names, `other` for the rest, so a deployment's series stay bounded whatever the number of
/// apps (as `richpush_app_pushes_total` does). One per process, shared by its job loops and its
/// per-app gauges, so an app is named alike in all its series.
package final class ScopeLabels: Sendable {
    /// The label of every scope past the limit.
    package static let other = "other"
    package let limit: Int
    private let named = Mutex<Set<String>>([])

    package init(limit: Int = 100) {
        self.limit = limit
    }

    /// `scope`'s label: its name if it already has one or there is room, else `other`.
    package func label(_ scope: String) -> String {
        named.withLock { named in
            if named.contains(scope) { return scope }
            guard named.count < limit else { return Self.other }
            named.insert(scope)
            return scope
        }
    }

    /// The scopes named so far.
    package var names: Set<String> { named.withLock { $0 } }
}
