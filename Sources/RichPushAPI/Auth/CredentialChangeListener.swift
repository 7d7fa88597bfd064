import Hiredis
import Logging
import ServiceLifecycle

/// Drops cached credentials on this replica when `richpush users passwd|remove` or `richpush keys
/// revoke` announce a change on the credential channel. Messages lost while the subscriber
/// reconnects are covered by the cache's revalidation after its TTL.
package struct CredentialChangeListener: Service {
    let subscriber: RedisSubscriber
    let channel: String
    let state: AuthState
    let logger: Logger

    package func run() async throws {
        try await subscriber.subscribe([channel])
        for await message in subscriber.messages.cancelOnGracefulShutdown() where message.channel == channel {
            let change = String(decoding: message.payload, as: UTF8.self)
            state.apply(change: change)
            logger.debug("credential change applied", metadata: ["change": "\(change.logSafe)"])
        }
        await subscriber.close()
    }
}
