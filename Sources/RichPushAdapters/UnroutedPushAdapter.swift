package import RichPushCore

/// Where a worker sends pushes of platforms it has no adapter for: each fails at once, for good,
/// naming what to configure. Handing them to another platform's adapter instead would have that
/// platform refuse the token and the device be unregistered.
package struct UnroutedPushAdapter: PushAdapter {
    package let name = "none"
    let configured: [String]
    /// The reason given instead of the missing adapter's (an app without credentials for the platform).
    let reason: String?

    /// `configured`: the adapters this worker has, for the message.
    package init(configured: [String]) {
        self.configured = configured
        reason = nil
    }

    /// Refuses every push with `reason`.
    package init(reason: String) {
        configured = []
        self.reason = reason
    }

    package func send(_ pushes: [OutgoingPush]) async throws -> [PushOutcome] {
        pushes.map { push in
            .failed(
                reason: reason
                    ?? "this worker has no adapter for platform \(push.installation.platform.rawValue) (it sends through \(configured.joined(separator: ", "))); add it to richpush worker --adapter",
                retryable: false)
        }
    }
}
