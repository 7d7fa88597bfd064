import Foundation
import Synchronization

/// One provider's pause as an adapter sees it: what this process learned from its own answers
/// (at once, without a round trip) joined with what the fleet shares through ``ProviderPauses``.
/// An adapter asks ``remaining()`` once per batch and sends nothing while a pause is in force;
/// a 429 that pauses the provider calls ``pause(for:)``, which every worker then honours.
package final class ProviderPause: Sendable {
    /// What is paused, e.g. `fcm:<project>`.
    package let scope: String
    private let shared: (any ProviderPauses)?
    private let localEnd = Mutex<Int64>(0)
    private let now: @Sendable () -> Int64

    /// `shared`: the fleet's pauses (nil: this process only). `now`: UNIX milliseconds.
    package init(scope: String, shared: (any ProviderPauses)?, now: @escaping @Sendable () -> Int64 = ProviderPause.wallClock) {
        self.scope = scope
        self.shared = shared
        self.now = now
    }

    /// UNIX milliseconds from the system clock: hosts of a fleet agree on it, as they must on a pause.
    package static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.up)) }

    /// How long sends are still paused, or nil: the later of this process's pause and the fleet's.
    /// Throws when the fleet's pauses cannot be read (the batch is then retried as a whole).
    package func remaining() async throws -> Duration? {
        var end = localEnd.withLock { $0 }
        if let shared, let fleet = try await shared.pauseEnd(scope), fleet > end {
            end = fleet
            localEnd.withLock { $0 = max($0, fleet) }
        }
        let left = end - now()
        return left > 0 ? .milliseconds(left) : nil
    }

    /// This process's pause alone (no round trip): for answers of a batch already under way.
    package var remainingHere: Duration? {
        let left = localEnd.withLock { $0 } - now()
        return left > 0 ? .milliseconds(left) : nil
    }

    /// Pauses the provider for `duration` from now, here at once and for the fleet. A failure to
    /// tell the fleet is not the batch's failure: this process still pauses, and the others learn
    /// of the limit from their own next answer, as they would without a shared pause.
    @discardableResult
    package func pause(for duration: Duration) async -> Duration {
        let end = now() + Int64(duration.components.seconds) * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        localEnd.withLock { $0 = max($0, end) }
        if let shared {
            do { try await shared.pause(scope, until: end) } catch {}
        }
        return duration
    }
}
