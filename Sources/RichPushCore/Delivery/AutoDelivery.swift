/// The `auto` delivery's choice for one device: the silent push (the tutorial's background
/// fetch) while the device's background budget allows and the device has been answering silent
/// pushes with fetches, else the alert with the notification service extension's path.
///
/// The budget is Apple's as its documentation describes it ("two or three per hour"), estimated
/// by the hub as a token bucket per installation; Android has none, but an app that does not
/// fetch its data messages (stopped, deprioritized) gets the alert, shown by the system.
package struct AutoDelivery: Sendable, Hashable {
    /// Silent pushes an iPhone may get at once, and how many more an hour.
    package var burst: Double
    package var perHour: Double
    /// How long an Android app may take to fetch a silent push before the hub counts it
    /// unanswered (an iPhone's unanswered push counts at once: its alert shows the content too).
    package var answerWindow: Duration

    package init(burst: Double = 3, perHour: Double = 3, answerWindow: Duration = .seconds(30)) {
        self.burst = burst
        self.perHour = perHour
        self.answerWindow = answerWindow
    }

    /// A problem with these settings, in words; nil when they are usable.
    package var problem: String? {
        guard burst >= 1, burst <= 100, burst.isFinite else { return "the auto budget's burst must be from 1 to 100" }
        guard perHour > 0, perHour <= 1_000_000, perHour.isFinite else {
            return "the auto budget must be more than 0 and at most 1000000 an hour"
        }
        guard answerWindow > .zero, answerWindow <= .seconds(3600) else {
            return "the answer window must be more than 0 s and at most 1 hour"
        }
        return nil
    }

    /// The form a device gets and why, in words for its status entry.
    package struct Choice: Sendable, Hashable {
        package var form: PushRenderer.Mode
        package var reason: String
    }

    /// The choice for a device with `estimate` (nil: never sent a push in `auto`) whose pushes
    /// take `format`, at `now` (ms since 1970).
    package func choose(_ estimate: DeviceEstimate?, format: PushFormat, now: Int64) -> Choice {
        switch format {
        case .webpush:
            return Choice(form: .silent, reason: "web push: the service worker fetches and shows every push")
        case .apns:
            let current = refilled(estimate, at: now)
            if let last = estimate?.lastSilent, estimate?.answered == false {
                return Choice(
                    form: .alert,
                    reason: "alert: silent push \(last) was not fetched (not woken: force-quit, Low Power Mode, offline or throttled)")
            }
            guard current.tokens >= 1 else {
                return Choice(form: .alert, reason: "alert: background budget spent (\(Self.number(perHour)) an hour, estimated)")
            }
            let left = Int(current.tokens.rounded(.down))
            return Choice(
                form: .silent,
                reason: estimate?.lastSilent == nil
                    ? "silent: first silent push, \(left) of \(Self.number(burst)) in the budget"
                    : "silent: the last silent push was fetched, \(left) of \(Self.number(burst)) in the budget")
        case .fcm:
            if let last = estimate?.lastSilent, estimate?.answered == false,
                now - (estimate?.lastSilentAt ?? now) > Int64(answerWindow / .milliseconds(1))
            {
                return Choice(
                    form: .alert,
                    reason:
                        "alert: silent push \(last) was not fetched within \(answerWindow) (the app did not wake: stopped or deprioritized)"
                )
            }
            return Choice(
                form: .silent,
                reason: estimate?.lastSilent == nil ? "silent: first data message" : "silent: the app fetches its data messages")
        }
    }

    /// The estimate after a silent push of notification `id` was sent at `now`: one token spent.
    package func spent(_ estimate: DeviceEstimate?, notification id: Int, at now: Int64) -> DeviceEstimate {
        var current = refilled(estimate, at: now)
        current.tokens = max(0, current.tokens - 1)
        current.lastSilent = id
        current.lastSilentAt = now
        current.answered = false
        return current
    }

    /// `estimate`'s bucket brought up to `now` (a full one for a device never seen).
    func refilled(_ estimate: DeviceEstimate?, at now: Int64) -> DeviceEstimate {
        guard var current = estimate else { return DeviceEstimate(tokens: burst, refilledAt: now) }
        if now > current.refilledAt {
            current.tokens = min(burst, current.tokens + Double(now - current.refilledAt) * perHour / 3_600_000)
            current.refilledAt = now
        }
        return current
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
