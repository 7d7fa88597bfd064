import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

extension WebPushSimulator {
    /// `GET /subscription/<id>/ws`: the user agent's side of RFC 8030 §6 over a WebSocket. On
    /// connect a `hello` frame, then every waiting message, then each new one as it is accepted;
    /// an `expired` frame and the close when the subscription expires.
    /// A message leaves the service once written to the socket; one that cannot be written goes
    /// back to the queue. A newer connection for the same subscription replaces this one.
    func addSubscriberRoute(to router: Router<BasicWebSocketRequestContext>) {
        router.ws(
            "subscription/:id/ws",
            shouldUpgrade: { _, context in
                guard case .active = self.store.lookup(context.parameters.get("id") ?? "") else { return .dontUpgrade }
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let id = context.requestContext.parameters.get("id") ?? ""
                guard case .success(let (token, wake)) = self.store.connect(id) else { return }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await outbound.write(.text(Self.encode(SubscriberFrame(type: .hello, subscriptionId: id))))
                        for await _ in wake {
                            let batch = self.store.take(id, token: token, now: self.configuration.now().timeIntervalSince1970)
                            for (index, message) in batch.enumerated() {
                                do {
                                    try await outbound.write(
                                        .text(Self.encode(SubscriberFrame(type: .message, subscriptionId: id, message: message))))
                                } catch {
                                    self.store.putBack(Array(batch[index...]), now: self.configuration.now().timeIntervalSince1970)
                                    throw error
                                }
                                self.logLine([
                                    "event": "delivered", "subscription": id, "message": message.id, "topic": message.topic,
                                    "bytes": message.body.count,
                                ])
                            }
                        }
                        // Replaced by a newer connection, or the subscription expired: then the user
                        // agent is told, as a browser's service worker gets `pushsubscriptionchange`.
                        if case .expired = self.store.lookup(id) {
                            try? await outbound.write(.text(Self.encode(SubscriberFrame(type: .expired, subscriptionId: id))))
                        }
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                    // Until the subscriber closes (pings are answered underneath).
                    do {
                        for try await _ in inbound {}
                    } catch {
                        context.logger.debug("subscriber connection failed", metadata: ["error.type": "\(error)"])
                    }
                    self.store.disconnect(id, token: token)
                    try await group.waitForAll()
                }
            })
    }

    static func encode(_ frame: SubscriberFrame) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(frame)) ?? Data(), as: UTF8.self)
    }
}
