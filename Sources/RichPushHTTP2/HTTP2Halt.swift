import Synchronization

/// Stops the rest of a batch once an answer says so: a provider that answers 429 for its whole
/// project (FCM's `QUOTA_EXCEEDED`) would answer every further request of the batch the same, and
/// counts them against the quota. From the first answer that trips it, the batch's requests that
/// have not gone out yet end `unprocessed` (never sent) instead of opening a stream; those already
/// in flight get their answers.
///
/// It also stops, request by request, what is not sent yet to a recipient an answer declared gone
/// (APNs' 410 for a device token, FCM's `UNREGISTERED`), in this batch and, through the
/// adapter's ``HTTP2GoneRecipients``, in every other batch of the process: a fan-out batch holds
/// many notifications to the same device, and none may go out after the provider said the token
/// is dead.
///
/// With ``HTTP2Backoffs`` shared by the batches of a process, a trip holds every batch (for the
/// answer's `Retry-After`, else `tripWait`), and an answer that asks to slow down for one
/// recipient (`recipientThrottled`) holds that recipient in every batch: requests not yet written
/// to them stay unsent.
package final class HTTP2Halt: Sendable {
    private let tripped = Atomic<Bool>(false)
    private let trips: @Sendable (_ status: Int, _ retryAfter: String?, _ body: [UInt8]) -> Bool
    private let recipientGone: (@Sendable (_ status: Int, _ body: [UInt8]) -> Bool)?
    private let gone: HTTP2GoneRecipients
    private let recipientThrottled: (@Sendable (_ status: Int, _ retryAfter: String?, _ body: [UInt8]) -> Duration?)?
    private let backoffs: HTTP2Backoffs?
    private let tripWait: Duration

    /// `trips` sees each answer's status, `retry-after` and body on the connection's event loop:
    /// keep it cheap (look at the status first); so does `recipientGone`, which says an answer
    /// declared its request's recipient gone, into `gone` (shared by the batches of a process),
    /// and `recipientThrottled`, which says how long an answer asked to wait before the next
    /// request to its recipient (nil: it did not), into `backoffs`.
    package init(
        when trips: @escaping @Sendable (_ status: Int, _ retryAfter: String?, _ body: [UInt8]) -> Bool,
        recipientGone: (@Sendable (_ status: Int, _ body: [UInt8]) -> Bool)? = nil, gone: HTTP2GoneRecipients = HTTP2GoneRecipients(),
        recipientThrottled: (@Sendable (_ status: Int, _ retryAfter: String?, _ body: [UInt8]) -> Duration?)? = nil,
        backoffs: HTTP2Backoffs? = nil, tripWait: Duration = .seconds(30)
    ) {
        self.trips = trips
        self.recipientGone = recipientGone
        self.gone = gone
        self.recipientThrottled = recipientThrottled
        self.backoffs = backoffs
        self.tripWait = tripWait
    }

    /// Whether an answer has tripped it, or another batch's answer holds the whole provider.
    package var isTripped: Bool { tripped.load(ordering: .relaxed) || backoffs?.providerRemaining != nil }

    /// Whether an answer of the batch declared `recipient` gone.
    package func isGone(_ recipient: String?) -> Bool { gone.contains(recipient) }

    /// Why a request stayed unsent because of this halt.
    package enum Stop: Sendable, Hashable {
        /// An answer declared its recipient gone (in this batch or another of the process).
        case recipientGone
        /// An answer asked to wait this long before the next request to its recipient (in this
        /// batch or another of the process).
        case recipientHeld(Duration)
        /// An answer of the batch tripped the halt, or another batch's holds the provider.
        case tripped
    }

    /// Why `exchange`, a request for `recipient`, stayed unsent because of this halt; nil if it
    /// was sent, or unsent for another reason.
    package func stopped(_ exchange: HTTP2Exchange, recipient: String?) -> Stop? {
        guard case .unprocessed = exchange else { return nil }
        if isGone(recipient) { return .recipientGone }
        if let wait = backoffs?.remaining(for: recipient) { return .recipientHeld(wait) }
        return isTripped ? .tripped : nil
    }

    /// Whether a request for `recipient` that has not gone out yet must stay unsent.
    func skips(_ recipient: String?) -> Bool { isTripped || isGone(recipient) || backoffs?.remaining(for: recipient) != nil }

    func consider(status: Int, retryAfter: String?, body: [UInt8], recipient: String?) {
        if !tripped.load(ordering: .relaxed) && trips(status, retryAfter, body) {
            tripped.store(true, ordering: .relaxed)
            backoffs?.holdProvider(for: HTTP2Backoffs.seconds(retryAfter) ?? tripWait)
        }
        if let recipient, let recipientGone, recipientGone(status, body) { gone.insert(recipient) }
        if let recipient, let backoffs, let recipientThrottled, let wait = recipientThrottled(status, retryAfter, body) {
            backoffs.hold(recipient, for: wait)
        }
    }
}
