import Logging
import RichPushAdapters
import RichPushCore
import ServiceLifecycle

/// Passes what a platform simulator (`apns-sim`, `fcm-sim`) accepted on to the simulated hub's
/// device channels (publish, or hold for an offline device), where `richpush device-sim`
/// receives it, until shutdown; then runs `onShutdown` (stopping the simulator's server). A push
/// the platform accepted is kept, as the platform keeps it: while Redis is away or refuses it, it
/// is tried again with back-off (up to `patience`, ``SimulatedHubAdapter/forward(_:patience:)``),
/// not dropped.
struct HubForwarder: Service {
    let pushes: AsyncStream<OutgoingPush>
    let sink: AsyncStream<OutgoingPush>.Continuation
    let hub: SimulatedHubAdapter
    let logger: Logger
    var onShutdown: @Sendable () async throws -> Void = {}
    var patience: Duration = .seconds(120)

    /// A stream for the simulator to yield into, and the forwarder that drains it.
    static func make(hub: SimulatedHubAdapter, logger: Logger) -> (yield: @Sendable (OutgoingPush) -> Void, forwarder: HubForwarder) {
        let (pushes, sink) = AsyncStream.makeStream(of: OutgoingPush.self)
        return ({ sink.yield($0) }, HubForwarder(pushes: pushes, sink: sink, hub: hub, logger: logger))
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await push in pushes {
                if let failure = await hub.forward(push, patience: patience) {
                    logger.warning(
                        "cannot pass a push on to the hub; giving up",
                        metadata: ["handle": "\(push.installation.handle)", "error": "\(failure)"])
                }
            }
        } onGracefulShutdown: {
            sink.finish()
        }
        try await onShutdown()
    }
}
