/// Where a process hears that a user's or an API key's credentials changed, announced by the
/// stores as `user:<name>` or `key:<id>`, so every API replica drops what it cached at once
/// instead of after its cache's time to live. Announcements made while nobody listens are lost
/// (Redis Pub/Sub's rule); the cache's revalidation covers them.
package protocol CredentialChanges: Sendable {
    /// Calls `apply` with each announcement until the process shuts down gracefully (or the
    /// task is cancelled).
    func listen(_ apply: @escaping @Sendable (String) -> Void) async throws
}
