import Logging
import RichPushAdapters
import RichPushCore
import ServiceLifecycle

/// Passes what a platform simulator (`apns-sim`, `fcm-sim`) accepted on to the simulated hub's
/// device channels (publish, or hold for an offline device), where `richpush device-sim`
/// receives it, until shutdown; then runs `onShutdown` (stopping the simulator's server).
struct HubForwarder: Service {
    let pushes: AsyncStream<OutgoingPush>
    let sink: AsyncStream<OutgoingPush>.Continuation
    let hub: SimulatedHubAdapter
    let logger: Logger
    var onShutdown: @Sendable () async throws -> Void = {}

    /// A stream for the simulator to yield into, and the forwarder that drains it.
    static func make(hub: SimulatedHubAdapter, logger: Logger) -> (yield: @Sendable (OutgoingPush) -> Void, forwarder: HubForwarder) {
        let (pushes, sink) = AsyncStream.makeStream(of: OutgoingPush.self)
        return ({ sink.yield($0) }, HubForwarder(pushes: pushes, sink: sink, hub: hub, logger: logger))
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await push in pushes {
                do {
                    _ = try await hub.send([push])
                } catch {
                    logger.warning("cannot pass a push on to the hub", metadata: ["handle": "\(push.installation.handle)", "error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            sink.finish()
        }
        try await onShutdown()
    }
}
