import RichPushCore
import Synchronization

/// The platforms' rules applied to each simulated device's pushes, with the state they need per
/// device (Apple's background budget, the push iOS holds back, the Android app's count of
/// high-priority messages that showed nothing). Time is passed in (simulated seconds from the
/// start of the run), so the rules are tested without waiting.
package final class DeviceRuleBook: Sendable {
    package let rules: DeviceRules
    private let devices = Mutex<[Int: DeviceState]>([:])
    private let tickets = Atomic<Int>(0)

    private struct DeviceState {
        var tokens: Double
        var refilledAt: Double
        /// The background push iOS holds back while the budget is spent (it keeps one), and
        /// when it hands it on.
        var kept: (ticket: Int, at: Double)?
        /// High-priority data messages in a row that showed nothing (Android).
        var unshownHighPriority = 0
        /// Web pushes in a row that showed no notification (Safari revokes past a few).
        var unshownWeb = 0
    }

    package init(rules: DeviceRules) {
        self.rules = rules
    }

    /// The condition of device `index` in the population (before an `offline` device comes back).
    package func condition(of index: Int) -> DeviceCondition {
        rules.population.condition(of: index, seed: rules.seed)
    }

    /// What the system of device `device` (`platform`, now in `condition`) does with `push`
    /// arriving at `now`.
    package func arrive(
        _ push: IncomingPush, device: Int, platform: PushPlatformRules, condition: DeviceCondition, at now: Double
    ) -> PushVerdict {
        let condition = condition.effective(on: platform)
        switch platform {
        case .ios: return ios(push, device: device, condition: condition, at: now)
        case .android: return android(push, device: device, condition: condition, at: now)
        // A service worker runs for every push; Chrome's `userVisibleOnly` applies after it
        // (``DeviceSimulator`` shows the generic notification when it showed none).
        case .web: return .deliver(.launch)
        }
    }

    /// Whether the push deferred with `ticket` is still to be handed on at `now`: false when a
    /// later one replaced it. Handing it on spends the budget it waited for.
    package func release(ticket: Int, device: Int, at now: Double) -> Bool {
        devices.withLock { devices in
            guard var state = devices[device], let kept = state.kept, kept.ticket == ticket else { return false }
            refill(&state, at: now)
            state.tokens = max(0, state.tokens - 1)
            state.kept = nil
            devices[device] = state
            return true
        }
    }

    /// Notes whether an Android app's high-priority data message led to a visible notification
    /// (FCM deprioritizes an app whose high-priority messages show nothing).
    package func noteHighPriority(device: Int, shown: Bool) {
        devices.withLock { devices in
            var state = devices[device] ?? fresh(at: 0)
            state.unshownHighPriority = shown ? 0 : state.unshownHighPriority + 1
            devices[device] = state
        }
    }

    /// The browser a web device runs.
    package enum Browser: String, Sendable {
        case chrome, safari
    }

    /// Device `device`'s browser, if it is a web device: Safari for a share ``DeviceRules/safariShare``.
    package func browser(of device: Int) -> Browser {
        SimulationRandom.stableUnit(of: "browser-\(device)", seed: rules.seed) < rules.safariShare ? .safari : .chrome
    }

    /// Notes whether a web push showed a notification; true when Safari revokes the device's
    /// subscription now (``DeviceRules/safariRevokesAfter`` in a row showed none).
    package func noteWebPush(device: Int, shown: Bool) -> Bool {
        guard browser(of: device) == .safari else { return false }
        return devices.withLock { devices in
            var state = devices[device] ?? fresh(at: 0)
            state.unshownWeb = shown ? 0 : state.unshownWeb + 1
            devices[device] = state
            return state.unshownWeb == rules.safariRevokesAfter
        }
    }

    // MARK: - iOS

    private func ios(_ push: IncomingPush, device: Int, condition: DeviceCondition, at now: Double) -> PushVerdict {
        switch (push.kind, condition) {
        // In the foreground the app gets every push (`willPresent`, `didReceiveRemoteNotification`).
        case (_, .foreground): return .deliver(.launch)
        case (.alert(let serviceExtension), _): return .deliver(serviceExtension ? .serviceExtension : .systemAlert)
        case (.background, .forceQuit):
            return .dropped(reason: "force-quit: iOS does not launch an app the user force-quit for a background push")
        case (.background, .lowPower):
            return .dropped(reason: "Low Power Mode: Background App Refresh is off, the app is not woken for a background push")
        case (.background, _): return budgeted(device: device, at: now)
        }
    }

    /// Apple's background budget: a token bucket of ``DeviceRules/backgroundBurst`` refilled at
    /// ``DeviceRules/backgroundPushesPerHour``. Past it the system holds one push back, the
    /// newest (a later one replaces it), until the bucket has a token again.
    private func budgeted(device: Int, at now: Double) -> PushVerdict {
        devices.withLock { devices in
            var state = devices[device] ?? fresh(at: now)
            refill(&state, at: now)
            defer { devices[device] = state }
            let reason =
                "background budget spent (\(Self.number(rules.backgroundPushesPerHour)) an hour): held back, a later one replaces it"
            if let kept = state.kept {
                let ticket = tickets.add(1, ordering: .relaxed).newValue
                state.kept = (ticket, kept.at)
                return .deferred(.launch, at: kept.at, reason: reason, ticket: ticket, coalescing: true)
            }
            if state.tokens >= 1 {
                state.tokens -= 1
                return .deliver(.launch)
            }
            let ticket = tickets.add(1, ordering: .relaxed).newValue
            let at = now + (1 - state.tokens) * 3600 / rules.backgroundPushesPerHour
            state.kept = (ticket, at)
            return .deferred(.launch, at: at, reason: reason, ticket: ticket, coalescing: true)
        }
    }

    // MARK: - Android

    private func android(_ push: IncomingPush, device: Int, condition: DeviceCondition, at now: Double) -> PushVerdict {
        if condition == .forceQuit {
            return .dropped(reason: "force-stopped: Android delivers no message to a stopped app until the user opens it")
        }
        // A notification message in the background is the system's to show; in the foreground
        // the app's `onMessageReceived` gets it.
        var delivery = PushDelivery.launch
        if case .alert = push.kind, condition != .foreground { delivery = .systemAlert }
        let deprioritized = push.highPriority && devices.withLock { ($0[device]?.unshownHighPriority ?? 0) >= rules.deprioritizeAfter }
        guard condition == .doze, !push.highPriority || deprioritized else { return .deliver(delivery) }
        let reason =
            deprioritized
            ? "deprioritized: the app's last \(rules.deprioritizeAfter) high-priority messages showed nothing; waits for Doze's next maintenance window"
            : "Doze: a normal-priority message waits for the next maintenance window"
        let ticket = tickets.add(1, ordering: .relaxed).newValue
        return .deferred(delivery, at: nextDozeWindow(device: device, after: now), reason: reason, ticket: ticket, coalescing: false)
    }

    /// The next maintenance window after `now`: every ``DeviceRules/dozeWindowSeconds``, at a
    /// phase of its own per device (fixed by the seed).
    package func nextDozeWindow(device: Int, after now: Double) -> Double {
        let every = rules.dozeWindowSeconds
        let phase = SimulationRandom.stableUnit(of: "doze-\(device)", seed: rules.seed) * every
        let windows = ((now - phase) / every).rounded(.down) + 1
        return phase + max(0, windows) * every
    }

    // MARK: - State

    private func fresh(at now: Double) -> DeviceState {
        DeviceState(tokens: Double(rules.backgroundBurst), refilledAt: now)
    }

    private func refill(_ state: inout DeviceState, at now: Double) {
        guard now > state.refilledAt else { return }
        state.tokens = min(Double(rules.backgroundBurst), state.tokens + (now - state.refilledAt) * rules.backgroundPushesPerHour / 3600)
        state.refilledAt = now
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
