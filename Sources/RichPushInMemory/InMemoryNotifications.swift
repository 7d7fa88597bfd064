package import RichPushCore
import Synchronization

/// Notifications in memory, in both roles the Redis store plays: the API's ``NotificationStore``
/// and the worker's ``DeliveryLedger``, with the same rules (leases, records, state order,
/// counting once). For fast unit tests of logic; the real-Redis tests prove the Redis scripts.
package final class InMemoryNotifications: NotificationStore, DeliveryLedger {
    struct State {
        var nextID = 1
        var records: [Int: RichNotification] = [:]
        var payloads: [String: [UInt8]] = [:]
        var states: [Int: DeliveryState] = [:]
        var counts: [Int: [String: Int]] = [:]
        var devices: [Int: [String: NotificationStatus.Device]] = [:]
        var ledger: [Int: [String: LedgerEntry]] = [:]
        var seen: [Int: Set<String>] = [:]
        /// Per (user, key): the fingerprint and, once created, the notification (no expiry here).
        var keys: [String: (fingerprint: String, notification: Int?)] = [:]
        var planned: [Int: Int] = [:]
        /// Per notification: admitted batches (member → (time, pushes)).
        var throttles: [Int: [String: (at: ContinuousClock.Instant, pushes: Int)]] = [:]
        /// Per notification: the failed attempts of each push.
        var attempts: [Int: [String: Int]] = [:]
        /// The `auto` delivery's estimates, by installation (without their expiry here).
        var estimates: [String: DeviceEstimate] = [:]
    }

    enum LedgerEntry {
        case recorded
        case leased(until: ContinuousClock.Instant, owner: String)
        /// Its lease was released: free to lease again, and still addressed.
        case tried
        /// Marked failed when its job was dead-lettered: free and addressed as `tried`; leasing
        /// it takes the failure back.
        case failed
    }

    let state = Mutex(State())
    /// Injected failures: a write that throws this fails as a Redis write would.
    private let failRecords = Mutex<(any Error)?>(nil)

    package init() {}

    /// Makes every `recordDeliveries` throw `error` until called with nil.
    package func failRecording(with error: (any Error)?) {
        failRecords.withLock { $0 = error }
    }

    // MARK: NotificationStore

    /// `draft.quota` is not charged: there are no quotas in memory (see ``chargeQuota(user:bytes:limits:)``).
    package func create(_ draft: NotificationDraft, hashing: ([UInt8]) -> String) async throws -> RichNotification {
        let hash = hashing(draft.payload)
        return state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            var record = RichNotification(
                id: id, message: draft.message, richType: draft.richType, contentType: draft.contentType,
                payloadHash: hash, payloadSize: draft.payload.count, creator: draft.creator, target: draft.target,
                createdAt: 0, delivery: draft.delivery, properties: draft.properties, native: draft.native)
            record.templatesOnly = draft.templatesOnly
            state.records[id] = record
            state.payloads[hash] = draft.payload
            state.states[id] = (draft.sendAt ?? 0) > 0 ? .scheduled : .queued
            if let key = draft.idempotency { state.keys[Self.name(key)] = (key.fingerprint, id) }
            return record
        }
    }

    package func claim(_ key: IdempotencyKey) async throws -> IdempotencyClaim {
        state.withLock { state in
            guard let held = state.keys[Self.name(key)] else {
                state.keys[Self.name(key)] = (key.fingerprint, nil)
                return .claimed
            }
            guard held.fingerprint == key.fingerprint else { return .mismatch }
            return held.notification.map { .completed(notification: $0) } ?? .inFlight(retryAfter: IdempotencyKey.inFlightRetryAfter)
        }
    }

    package func cancel(id: Int) async throws -> CancelOutcome {
        state.withLock { Self.cancel(id, in: &$0) }
    }

    /// All under one lock, as the Redis store's batch is one pipeline per partition.
    package func cancel(ids: [Int], progress: (Int) async -> Void) async throws -> [Result<CancelOutcome, any Error>] {
        let outcomes = state.withLock { state in ids.map { Self.cancel($0, in: &state) } }
        await progress(outcomes.count { $0.isCancelled })
        return outcomes.map { .success($0) }
    }

    /// The cancel script's rules: not sent yet (or a split fan-out not ended) is cancelled.
    private static func cancel(_ id: Int, in state: inout State) -> CancelOutcome {
        guard let current = state.states[id] else { return .notFound }
        switch current {
        case .cancelled: return .alreadyCancelled
        case .accepted, .scheduled, .queued, .failed:
            state.states[id] = .cancelled
            return .cancelled
        default:
            let counts = state.counts[id] ?? [:]
            let ended = ["sent", "held", "invalidToken", "failed"].reduce(0) { $0 + (counts[$1] ?? 0) }
            guard ended < state.planned[id] ?? 0 else { return .tooLate(current) }
            state.states[id] = .cancelled
            return .cancelled
        }
    }

    package func recordPlannedFanOuts(_ planned: [Int: Int]) async throws {
        state.withLock { $0.planned.merge(planned) { _, new in new } }
    }

    package func notificationsToSend(ids: [Int]) async throws -> (records: [RichNotification], cancelled: Set<Int>) {
        state.withLock { state in
            let records = ids.compactMap { state.records[$0] }
            return (records, Set(records.map(\.id).filter { state.states[$0] == .cancelled }))
        }
    }

    package func release(_ key: IdempotencyKey) async throws {
        state.withLock { state in
            if let held = state.keys[Self.name(key)], held.notification == nil, held.fingerprint == key.fingerprint {
                state.keys[Self.name(key)] = nil
            }
        }
    }

    private static func name(_ key: IdempotencyKey) -> String { "\(key.user)\u{0}\(key.key)" }

    package func notification(id: Int) async throws -> RichNotification? {
        state.withLock { $0.records[id] }
    }

    package func payload(hash: String, notification id: Int) async throws -> [UInt8]? {
        state.withLock { $0.payloads[hash] }
    }

    package func notifications(createdBy user: String, before: Int?, limit: Int) async throws -> [RichNotification] {
        state.withLock { state in
            Array(state.records.values.filter { $0.creator == user && $0.id < (before ?? .max) }.sorted { $0.id > $1.id }.prefix(limit))
        }
    }

    package func status(id: Int) async throws -> NotificationStatus? {
        state.withLock { state in
            guard let current = state.states[id] else { return nil }
            var counts = Dictionary(uniqueKeysWithValues: DeliveryCounter.allCases.map { ($0.rawValue, 0) })
            counts.merge(state.counts[id] ?? [:]) { _, new in new }
            let devices = (state.devices[id] ?? [:]).values.sorted { $0.installation < $1.installation }
            return NotificationStatus(id: id, state: current, counts: counts, devices: devices)
        }
    }

    package func recordFetch(id: Int, installation: String?, reader: String, if check: ReadCheck?) async throws -> Bool {
        state.withLock { state in
            guard Self.readable(state, id, check) else { return false }
            if state.seen[id, default: []].insert("fetched:" + (installation.map { "i:\($0)" } ?? "u:\(reader)")).inserted {
                state.counts[id, default: [:]][DeliveryCounter.fetched.rawValue, default: 0] += 1
            }
            Self.advance(&state, id, to: .fetched)
            return true
        }
    }

    package func recordReceipt(
        id: Int, kind: ReceiptKind, installation: String?, reader: String,
        if check: ReadCheck?
    ) async throws -> ReceiptOutcome {
        state.withLock { state in
            guard Self.readable(state, id, check) else { return .unreadable }
            guard state.seen[id, default: []].insert("\(kind.rawValue):" + (installation.map { "i:\($0)" } ?? "u:\(reader)")).inserted
            else { return .duplicate }
            state.counts[id, default: [:]][kind.rawValue, default: 0] += 1
            if let installation {
                var device = state.devices[id]?[installation] ?? NotificationStatus.Device(installation: installation, state: "")
                device.state = kind.rawValue
                state.devices[id, default: [:]][installation] = device
            }
            Self.advance(&state, id, to: kind.state)
            return .counted
        }
    }

    package func isReadable(id: Int, _ check: ReadCheck) async throws -> Bool {
        state.withLock { state in Self.readable(state, id, check) }
    }

    package func chargeQuota(user: String, bytes: Int, limits: QuotaLimits) async throws -> QuotaRefusal? {
        nil  // no quotas in memory: the Redis scripts and their tests own them
    }

    package func forgetNotifications(createdBy user: String) async throws -> Int {
        state.withLock { state in
            let ids = state.records.values.filter { $0.creator == user }.map(\.id)
            for id in ids {
                state.records[id] = nil
                state.states[id] = nil
                state.counts[id] = nil
                state.devices[id] = nil
                state.ledger[id] = nil
            }
            return ids.count
        }
    }

    package func notifications(ids: [Int]) async throws -> [RichNotification] {
        state.withLock { state in ids.compactMap { state.records[$0] } }
    }

    // MARK: DeliveryLedger

    package func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        let now = ContinuousClock.now
        return state.withLock { state in
            keys.map { key in
                switch state.ledger[key.notification]?[key.installation] {
                case .recorded:
                    return .recorded
                case .leased(let until, let holder) where holder != owner && until > now:
                    return .leasedByOther(remaining: now.duration(to: until))
                default:
                    if case .failed = state.ledger[key.notification]?[key.installation] { Self.revive(&state, key) }
                    state.ledger[key.notification, default: [:]][key.installation] = .leased(until: now + duration, owner: owner)
                    return .leased
                }
            }
        }
    }

    package func releaseLeases(_ keys: [DeliveryKey]) async throws {
        state.withLock { state in
            for key in keys {
                if case .leased = state.ledger[key.notification]?[key.installation] {
                    state.ledger[key.notification]?[key.installation] = .tried
                }
            }
        }
    }

    package func countFailedAttempts(_ pushes: [Int: [String]]) async throws -> [Int: [String: Int]] {
        if let error = failRecords.withLock({ $0 }) { throw error }
        return state.withLock { state in
            var counts: [Int: [String: Int]] = [:]
            for (id, installations) in pushes {
                for installation in Set(installations) {
                    state.attempts[id, default: [:]][installation, default: 0] += 1
                    counts[id, default: [:]][installation] = state.attempts[id]?[installation]
                }
            }
            return counts
        }
    }

    package func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws {
        if let error = failRecords.withLock({ $0 }) { throw error }
        state.withLock { state in
            for (id, results) in results {
                for result in results {
                    state.counts[id, default: [:]][result.counter.rawValue, default: 0] += 1
                    guard result.counter != .duplicateSuppressed else { continue }
                    state.devices[id, default: [:]][result.installation] = NotificationStatus.Device(
                        installation: result.installation, state: result.counter.rawValue, adapterID: result.adapterID, error: result.error,
                        template: result.template, locale: result.locale, strategy: result.strategy)
                    state.ledger[id, default: [:]][result.installation] = result.counter == .retried ? .tried : .recorded
                }
                if results.contains(where: { $0.counter == .sent || $0.counter == .held }) { Self.advance(&state, id, to: .sent) }
            }
        }
    }

    package func recordExpired(_ expired: [Int: [String]]) async throws {
        state.withLock { state in
            for (id, installations) in expired {
                for installation in installations {
                    state.counts[id, default: [:]][DeliveryCounter.expired.rawValue, default: 0] += 1
                    var device = state.devices[id]?[installation] ?? NotificationStatus.Device(installation: installation, state: "")
                    device.state = DeliveryCounter.expired.rawValue
                    state.devices[id, default: [:]][installation] = device
                }
            }
        }
    }

    package func admitThrottled(_ batches: [ThrottledBatch]) async throws -> [Duration] {
        let now = ContinuousClock.now
        return state.withLock { state in
            batches.map { batch in
                var window = (state.throttles[batch.notification] ?? [:]).filter { now - $0.value.at < .seconds(60) }
                defer { state.throttles[batch.notification] = window }
                if window[batch.batch] != nil { return .zero }
                let used = window.values.reduce(0) { $0 + $1.pushes }
                if used + batch.pushes <= batch.perMinute {
                    window[batch.batch] = (now, batch.pushes)
                    return .zero
                }
                var freed = 0
                for entry in window.values.sorted(by: { $0.at < $1.at }) {
                    freed += entry.pushes
                    if used - freed + batch.pushes <= batch.perMinute { return max(.milliseconds(1), entry.at + .seconds(60) - now) }
                }
                return .seconds(60)
            }
        }
    }

    // MARK: For tests

    /// The ledger entry of one pair: "R", "L:<owner>", "T", "F", or nil.
    package func ledgerEntry(_ key: DeliveryKey) -> String? {
        state.withLock { state in
            switch state.ledger[key.notification]?[key.installation] {
            case .recorded: LedgerMark.recorded.rawValue
            case .leased(_, let owner): "\(LedgerMark.leased.rawValue):\(owner)"
            case .tried: LedgerMark.tried.rawValue
            case .failed: LedgerMark.failed.rawValue
            case nil: nil
            }
        }
    }

    /// Leases a pair for `owner` for `duration` (a worker that died holding it, in tests).
    package func lease(_ key: DeliveryKey, owner: String, for duration: Duration) {
        state.withLock { $0.ledger[key.notification, default: [:]][key.installation] = .leased(until: .now + duration, owner: owner) }
    }

    package func idCeiling() async throws -> Int {
        state.withLock { $0.nextID }
    }

    package func unfetched(by installation: String, among ids: [Int]) async throws -> [Int] {
        state.withLock { state in
            ids.filter {
                Self.addressed(state, $0, to: [installation]) && !(state.seen[$0]?.contains("fetched:i:\(installation)") ?? false)
            }
        }
    }

    package func deliveryEstimates(of installations: [String]) async throws -> [String: DeviceEstimate] {
        state.withLock { state in
            var found: [String: DeviceEstimate] = [:]
            for installation in installations {
                guard var estimate = state.estimates[installation] else { continue }
                estimate.answered = estimate.lastSilent.map { state.seen[$0]?.contains("fetched:i:\(installation)") ?? false } ?? false
                found[installation] = estimate
            }
            return found
        }
    }

    package func saveDeliveryEstimates(_ estimates: [String: DeviceEstimate]) async throws {
        state.withLock { state in
            for (installation, estimate) in estimates {
                var stored = estimate
                stored.answered = false
                state.estimates[installation] = stored
            }
        }
    }

    /// Whether record `id` exists and is readable as `check` says (no check: it exists).
    private static func readable(_ state: State, _ id: Int, _ check: ReadCheck?) -> Bool {
        guard let record = state.records[id] else { return false }
        guard let check else { return true }
        return record.creator == check.creator || addressed(state, id, to: check.addressees)
    }

    /// Whether one of `installations` is in the notification's ledger (its push was leased).
    private static func addressed(_ state: State, _ id: Int, to installations: [String]) -> Bool {
        installations.contains { state.ledger[id]?[$0] != nil }
    }

    /// Moves the state on to `next` unless it is further; true when it moved.
    @discardableResult
    static func advance(_ state: inout State, _ id: Int, to next: DeliveryState) -> Bool {
        guard let current = state.states[id], current < next else { return false }
        state.states[id] = next
        return true
    }
}
