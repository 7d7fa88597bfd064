import HummingbirdBcrypt
import NIOPosix

/// Bounds bcrypt work: at most `concurrency` checks run (on NIO's thread pool, never on an event
/// loop or the cooperative pool) and at most `queueLimit` wait; a check beyond that is refused
/// with 503 at once, so a burst of logins cannot stall everyone for seconds.
struct BcryptGate: Sendable {
    private let gate: WorkGate

    init(concurrency: Int, queueLimit: Int) {
        gate = WorkGate(concurrency: concurrency, queueLimit: queueLimit, busy: "too many logins are being checked")
    }

    var concurrency: Int { gate.concurrency }
    var queueLimit: Int { gate.queueLimit }

    /// Whether `password` matches the bcrypt `hash`.
    func verify(_ password: String, hash: String) async throws -> Bool {
        try await gate.run {
            try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
        }
    }
}
