import Foundation
import RichPushCore
import Synchronization

/// The push service's subscriptions and the messages waiting for their user agents, bounded:
/// at most `keptPerSubscription` per subscription (past that the oldest is dropped), at most
/// `keptTotal` in all (past that a push for an offline subscriber is refused), at most
/// `subscriptions` subscriptions. A connected subscriber takes its messages from here too, so a
/// newer message with the same Topic replaces one not yet written to its socket (RFC 8030 §5.4).
/// Never awaits under its lock.
final class SubscriptionStore: Sendable {
    struct Limits: Sendable {
        var keptPerSubscription = 100
        var keptTotal = 10_000
        var subscriptions = 100_000
    }

    enum Lookup: Equatable {
        case active(applicationServerKey: [UInt8]?)
        case expired
        case unknown
    }

    enum Outcome: Equatable {
        /// Waiting in the subscription's queue (its subscriber, if connected, has been woken).
        case queued(replaced: Bool, droppedOldest: Bool)
        /// TTL 0 and nobody connected: dropped, as RFC 8030 §5.2 says.
        case dropped
        case gone(Lookup)
        case full
    }

    private struct Entry {
        var applicationServerKey: [UInt8]?
        var expired = false
        var kept: [PushMessage] = []
        var connection: (token: Int, wake: AsyncStream<Void>.Continuation)?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var keptTotal = 0
        var nextToken = 0
    }

    let limits: Limits
    private let state = Mutex(State())

    init(limits: Limits) { self.limits = limits }

    /// A new subscription's id, or nil when the store holds `limits.subscriptions` already.
    func create(applicationServerKey: [UInt8]?) -> String? {
        let id = Self.randomID()
        return state.withLock { state in
            guard state.entries.count < limits.subscriptions else { return nil }
            state.entries[id] = Entry(applicationServerKey: applicationServerKey)
            return id
        }
    }

    /// Marks it expired (later pushes: 410), dropping its messages and closing its socket.
    func expire(_ id: String) -> Bool {
        state.withLock { state in
            guard var entry = state.entries[id] else { return false }
            entry.expired = true
            state.keptTotal -= entry.kept.count
            entry.kept = []
            entry.connection?.wake.finish()
            entry.connection = nil
            state.entries[id] = entry
            return true
        }
    }

    func lookup(_ id: String) -> Lookup {
        state.withLock { state in
            guard let entry = state.entries[id] else { return .unknown }
            return entry.expired ? .expired : .active(applicationServerKey: entry.applicationServerKey)
        }
    }

    func isConnected(_ id: String) -> Bool { state.withLock { $0.entries[id]?.connection != nil } }

    /// Messages waiting (live or not yet swept), for tests and logs.
    func keptCount(_ id: String) -> Int { state.withLock { $0.entries[id]?.kept.count ?? 0 } }

    func offer(_ message: PushMessage, now: Double) -> Outcome {
        state.withLock { state in
            guard var entry = state.entries[message.subscriptionId] else { return .gone(.unknown) }
            guard !entry.expired else { return .gone(.expired) }
            if message.ttl == 0 && entry.connection == nil { return .dropped }
            let before = entry.kept.count
            entry.kept.removeAll { !$0.isLive(at: now) }
            state.keptTotal -= before - entry.kept.count
            state.entries[message.subscriptionId] = entry
            let replaceIndex = message.topic.flatMap { topic in entry.kept.firstIndex { $0.topic == topic } }
            let freesSlot = replaceIndex != nil || entry.kept.count >= limits.keptPerSubscription
            if !freesSlot && state.keptTotal >= limits.keptTotal {
                Self.sweep(&state, now: now)
                guard state.keptTotal < limits.keptTotal else { return .full }
            }
            if let replaceIndex {
                entry.kept.remove(at: replaceIndex)
            } else if entry.kept.count >= limits.keptPerSubscription {
                entry.kept.removeFirst()
            } else {
                state.keptTotal += 1
            }
            entry.kept.append(message)
            entry.connection?.wake.yield()
            state.entries[message.subscriptionId] = entry
            return .queued(replaced: replaceIndex != nil, droppedOldest: replaceIndex == nil && freesSlot)
        }
    }

    /// Registers a subscriber's connection (replacing an earlier one, whose stream ends): its
    /// token and the stream that wakes it when messages wait, or why not.
    func connect(_ id: String) -> Result<(token: Int, wake: AsyncStream<Void>), LookupFailure> {
        state.withLock { state in
            guard var entry = state.entries[id] else { return .failure(LookupFailure(lookup: .unknown)) }
            guard !entry.expired else { return .failure(LookupFailure(lookup: .expired)) }
            entry.connection?.wake.finish()
            state.nextToken += 1
            let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            entry.connection = (state.nextToken, continuation)
            if !entry.kept.isEmpty { continuation.yield() }
            state.entries[id] = entry
            return .success((state.nextToken, stream))
        }
    }

    struct LookupFailure: Error { let lookup: Lookup }

    /// Everything waiting for the connection `token`, now its to write (empty if another
    /// connection replaced it).
    func take(_ id: String, token: Int, now: Double) -> [PushMessage] {
        state.withLock { state in
            guard var entry = state.entries[id], entry.connection?.token == token else { return [] }
            let taken = entry.kept.filter { $0.isLive(at: now) }
            state.keptTotal -= entry.kept.count
            entry.kept = []
            state.entries[id] = entry
            return taken
        }
    }

    /// Messages a connection took but could not write: back to the front of the queue, unless a
    /// newer one with the same Topic came meanwhile or the subscription expired.
    func putBack(_ messages: [PushMessage], now: Double) {
        guard let id = messages.first?.subscriptionId else { return }
        state.withLock { state in
            guard var entry = state.entries[id], !entry.expired else { return }
            let topics = Set(entry.kept.compactMap(\.topic))
            let back = messages.filter { $0.isLive(at: now) && ($0.topic.map { !topics.contains($0) } ?? true) }
            let room = max(0, min(limits.keptPerSubscription - entry.kept.count, limits.keptTotal - state.keptTotal))
            let restored = Array(back.suffix(room))
            entry.kept.insert(contentsOf: restored, at: 0)
            state.keptTotal += restored.count
            state.entries[id] = entry
        }
    }

    /// The connection `token` is gone: TTL-0 messages waiting for it are dropped with it.
    func disconnect(_ id: String, token: Int) {
        state.withLock { state in
            guard var entry = state.entries[id], let connection = entry.connection, connection.token == token else { return }
            connection.wake.finish()
            entry.connection = nil
            let before = entry.kept.count
            entry.kept.removeAll { $0.ttl == 0 }
            state.keptTotal -= before - entry.kept.count
            state.entries[id] = entry
        }
    }

    /// Drops every expired message (called only when the total cap is reached).
    private static func sweep(_ state: inout State, now: Double) {
        for (id, entry) in state.entries where !entry.kept.isEmpty {
            var entry = entry
            let before = entry.kept.count
            entry.kept.removeAll { !$0.isLive(at: now) }
            state.keptTotal -= before - entry.kept.count
            state.entries[id] = entry
        }
    }

    /// 16 random bytes, base64url: unguessable, as a push service's endpoints are.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next() as UInt64, generator.next() as UInt64]
        return words.withUnsafeBytes { Base64URL.encode($0) }
    }
}
