import NIOCore
import Synchronization

/// How a client's liveness PINGs ended (RFC 9113 §6.7): answered (the connection was kept) or not
/// (it was closed). Shared by a client's connections; counted where the probe's timer decides.
final class HTTP2Liveness: Sendable {
    /// How long a PING may wait for any answer before the connection counts as dead.
    let timeout: TimeAmount
    private let answered = Atomic<Int>(0)
    private let unanswered = Atomic<Int>(0)

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    var probesAnswered: Int { answered.load(ordering: .relaxed) }
    var probesUnanswered: Int { unanswered.load(ordering: .relaxed) }

    func decided(alive: Bool) {
        if alive {
            answered.add(1, ordering: .relaxed)
        } else {
            unanswered.add(1, ordering: .relaxed)
        }
    }
}
