import Synchronization

/// The `app` label of an app's series: its own name for the first ``limit`` apps the process
/// names, `other` for the rest, so a deployment's series stay bounded whatever the number of
/// apps (as `richpush_app_pushes_total` does). One per process, shared by its job loops and its
/// per-app gauges, so an app is named alike in all its series.
package final class AppLabels: Sendable {
    /// The label of every app past the limit.
    package static let other = "other"
    package let limit: Int
    private let named = Mutex<Set<String>>([])

    package init(limit: Int = 100) {
        self.limit = limit
    }

    /// `app`'s label: its name if it already has one or there is room, else `other`.
    package func label(_ app: String) -> String {
        named.withLock { named in
            if named.contains(app) { return app }
            guard named.count < limit else { return Self.other }
            named.insert(app)
            return app
        }
    }

    /// The apps named so far.
    package var names: Set<String> { named.withLock { $0 } }
}
