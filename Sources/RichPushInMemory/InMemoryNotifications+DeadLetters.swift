package import RichPushCore

/// The dead-lettering of delivery jobs in memory, with the Redis store's rules (see
/// ``DeliveryLedger/recordDeadLettered(_:)``); there are no webhooks in memory.
extension InMemoryNotifications {
    package func recordDeadLettered(_ reasons: [DeliveryScope: String]) async throws {
        let now = ContinuousClock.now
        state.withLock { state in
            for (scope, reason) in reasons where state.states[scope.notification] != nil {
                let id = scope.notification
                let ledger = state.ledger[id] ?? [:]
                let pairs = scope.installations ?? Array(ledger.keys)
                let open = pairs.filter { installation in
                    switch ledger[installation] {
                    case nil, .tried: true
                    case .leased(let until, _): until <= now
                    case .recorded, .failed: false
                    }
                }
                for installation in open {
                    let last = state.devices[id]?[installation]?.error
                    state.ledger[id, default: [:]][installation] = .failed
                    state.devices[id, default: [:]][installation] = NotificationStatus.Device(
                        installation: installation, state: DeliveryCounter.failed.rawValue,
                        error: last.map { "\(reason); its last error: \($0)" } ?? reason)
                }
                state.counts[id, default: [:]][DeliveryCounter.failed.rawValue, default: 0] += open.count
                if !open.isEmpty || (scope.installations == nil && ledger.isEmpty) { Self.advance(&state, id, to: .failed) }
            }
        }
    }

    package func reviveDeadLettered(_ scopes: [DeliveryScope]) async throws {
        state.withLock { state in
            for scope in scopes where state.states[scope.notification] != nil {
                if let installations = scope.installations {
                    for installation in installations { state.attempts[scope.notification]?[installation] = nil }
                } else {
                    state.attempts[scope.notification] = nil
                }
                let ledger = state.ledger[scope.notification] ?? [:]
                for installation in scope.installations ?? Array(ledger.keys) {
                    guard case .failed = ledger[installation] else { continue }
                    Self.revive(&state, DeliveryKey(notification: scope.notification, installation: installation))
                    state.ledger[scope.notification]?[installation] = .tried
                }
                if state.states[scope.notification] == .failed { state.states[scope.notification] = .queued }
            }
        }
    }

    /// Takes back the failure a dead-lettering marked on `key`: counted out of `failed`, the
    /// device `queued`, a `failed` notification `queued`. The caller sets the ledger entry.
    static func revive(_ state: inout State, _ key: DeliveryKey) {
        state.counts[key.notification, default: [:]][DeliveryCounter.failed.rawValue, default: 0] -= 1
        state.devices[key.notification, default: [:]][key.installation] = NotificationStatus.Device(
            installation: key.installation, state: "queued")
        if state.states[key.notification] == .failed { state.states[key.notification] = .queued }
    }
}
