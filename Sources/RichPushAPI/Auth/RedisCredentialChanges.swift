package import Hiredis
import RichPushCore
import ServiceLifecycle

/// Credential changes on Redis: the announcements `richpush users passwd|remove` and `richpush
/// keys revoke` publish on `channel`, heard through `subscriber` (closed when listening ends).
package struct RedisCredentialChanges: CredentialChanges {
    let subscriber: RedisSubscriber
    let channel: String

    package init(subscriber: RedisSubscriber, channel: String) {
        self.subscriber = subscriber
        self.channel = channel
    }

    package func listen(_ apply: @escaping @Sendable (String) -> Void) async throws {
        try await subscriber.subscribe([channel])
        for await message in subscriber.messages.cancelOnGracefulShutdown() where message.channel == channel {
            apply(String(decoding: message.payload, as: UTF8.self))
        }
        await subscriber.close()
    }
}
