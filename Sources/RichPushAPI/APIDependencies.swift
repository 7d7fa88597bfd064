package import Prometheus
package import RichPushApps
package import RichPushCore
package import RichPushNH
package import RichPushQueue
package import RichPushStorage

/// What the API needs from outside: the stores by role, where `/metrics` reads from, and how it
/// hears credential changes. ``redis(redis:keys:queue:configuration:registry:credentialChanges:)``
/// builds it on Redis for `richpush api` and the tests.
package struct APIDependencies: Sendable {
    package var stores: APIStores
    /// Where `/metrics` reads from; nil serves an empty page (tests that do not bootstrap metrics).
    package var registry: PrometheusCollectorRegistry?
    /// Hears credential changes (from `richpush users`/`keys` on Redis) so every replica drops its
    /// cached entries at once; nil leaves that to the cache's revalidation after its TTL.
    package var credentialChanges: (any CredentialChanges)?
    /// Apps and their credentials, for the operator's `/api/apps`; nil leaves those routes out.
    package var apps: (any AppStore)?
    /// The stores of an app other than the default (built once per app, when a request first
    /// names it); nil serves the default app only.
    package var appStores: (@Sendable (AppID) -> APIStores)?
    /// Writes an app's weight and cap into every partition of the queue (fair scheduling), after
    /// `/api/apps` stored them; nil: no queue to write them to (they are stored only).
    package var applyScheduling: (@Sendable (AppID, AppShare) async throws -> Void)?
    /// Clears a removed app's weight, cap and pause from every partition of the queue, before its
    /// record goes (nil: no queue).
    package var forgetScheduling: (@Sendable (AppID) async throws -> Void)?
    /// What the operator's console (`/console`) runs on; nil leaves the console out (404).
    package var console: ConsoleBackend?
    /// Checks the signed media URLs of alerts (`/media/…`); nil leaves that route out (404).
    package var mediaSigner: MediaURLSigner?
    /// An app's Notification Hubs rules (nil: no such app), for the NH listener
    /// (``buildNHApplication(listener:configuration:dependencies:logger:)``).
    package var nhRules: (@Sendable (AppID) async throws -> [NHAccessRule]?)?

    package init(
        stores: APIStores, registry: PrometheusCollectorRegistry? = nil, credentialChanges: (any CredentialChanges)? = nil,
        apps: (any AppStore)? = nil
    ) {
        self.stores = stores
        self.registry = registry
        self.credentialChanges = credentialChanges
        self.apps = apps
    }
}
