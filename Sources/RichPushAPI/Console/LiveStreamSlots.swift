import Synchronization

/// Bounds the live streams one API replica serves at once (each reads the queue every interval):
/// a stream takes a slot before its answer starts, and gives it back when its body is released,
/// whether it ran to its end, failed, or never ran because the client went away first.
final class LiveStreamSlots: Sendable {
    let limit: Int
    private let taken = Mutex(0)

    init(limit: Int) { self.limit = limit }

    /// A slot, or nil when all are taken.
    func take() -> Slot? {
        let granted = taken.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        return granted ? Slot(owner: self) : nil
    }

    var inUse: Int { taken.withLock { $0 } }

    fileprivate func release() { taken.withLock { $0 -= 1 } }

    /// Held by a stream's body; its release gives the slot back (once).
    final class Slot: Sendable {
        private let owner: LiveStreamSlots
        fileprivate init(owner: LiveStreamSlots) { self.owner = owner }
        deinit { owner.release() }
    }
}
