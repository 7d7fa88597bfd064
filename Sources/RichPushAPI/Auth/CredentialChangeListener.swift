import Logging
import RichPushCore
import ServiceLifecycle

/// Drops cached credentials on this replica when a user's or a key's credentials change
/// (``CredentialChanges``: on Redis, what `richpush users passwd|remove` or `richpush keys
/// revoke` announce). Changes missed while it reconnects are covered by the cache's
/// revalidation after its TTL.
package struct CredentialChangeListener: Service {
    let changes: any CredentialChanges
    let state: AuthState
    let logger: Logger

    package func run() async throws {
        try await changes.listen { [state, logger] change in
            state.apply(change: change)
            logger.debug("credential change applied", metadata: ["change": "\(change.logSafe)"])
        }
    }
}
