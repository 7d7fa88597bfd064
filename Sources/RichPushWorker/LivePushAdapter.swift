import RichPushCore
import Synchronization

/// A push adapter that is replaced while the worker runs, when the app's credentials change:
/// each batch is sent through the adapter current when it starts. The provider clients (their
/// connections) are the process's and outlive any one adapter, so a replacement opens nothing
/// and closes nothing; it only changes as whom the next pushes are sent.
final class LivePushAdapter: PushAdapter {
    private let current: Mutex<any PushAdapter>

    init(_ adapter: any PushAdapter) {
        current = Mutex(adapter)
    }

    /// The adapter the next batch goes through.
    var adapter: any PushAdapter { current.withLock { $0 } }

    func replace(with adapter: any PushAdapter) {
        current.withLock { $0 = adapter }
    }

    var name: String { adapter.name }

    func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        try await adapter.send(pushes)
    }

    func name(for platform: Platform) -> String { adapter.name(for: platform) }

    func prepare() async { await adapter.prepare() }
}
