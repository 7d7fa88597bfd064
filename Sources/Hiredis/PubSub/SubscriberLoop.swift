import Glibc
import Logging

/// The thread side of a ``RedisSubscriber``: owns the hiredis context, the subscription sets, and
/// the (un)subscribe calls waiting for Redis's confirmations. Lives on the subscriber's thread only.
struct SubscriberLoop {
    private let owner: RedisSubscriber
    private var context: RedisContext?
    private var channels: Set<String> = []
    private var patterns: Set<String> = []
    private var shards: Set<String> = []
    /// Confirmations still expected, oldest first; Redis confirms commands in order.
    private var awaiting: [Awaited] = []
    private var backoff: Duration
    private var hadConnection = false
    /// Why an earlier command of the operation being confirmed was refused: its callers hear it
    /// when the operation's last command is answered.
    private var refusal: RedisError?

    /// One command's confirmations. An operation (or a restore) that takes several commands
    /// (sharded channels of several slots) has one entry per command; the last ends it.
    private struct Awaited {
        let kind: RedisSubscriber.Kind
        var remaining: Int
        var continuations: [CheckedContinuation<Void, any Error>]
        /// The shard channels an `SSUBSCRIBE` asked for: if it is refused (the node no longer
        /// serves their slot), they are lost and the owner places them again.
        var shards: [String] = []
        var endsOperation = true
        /// The last confirmation of a restore after a reconnection.
        var restores = false
    }

    init(owner: RedisSubscriber) {
        self.owner = owner
        self.backoff = owner.configuration.reconnectBackoff.lowerBound
    }

    mutating func run() {
        while true {
            let (operations, closed) = owner.takeOperations()
            if closed {
                fail(operations.map(\.continuation), RedisError(code: .closed, message: "the subscriber was closed"))
                fail(awaiting.flatMap(\.continuations), RedisError(code: .closed, message: "the subscriber was closed"))
                context = nil
                owner.finishStream()
                return
            }
            let wanted = !operations.isEmpty || !channels.isEmpty || !patterns.isEmpty || !shards.isEmpty || !awaiting.isEmpty
            if context == nil && wanted && !reconnect(failing: operations) {
                continue
            }
            do throws(RedisError) {
                if let context {
                    for operation in operations { try send(operation, on: context) }
                    try context.flush()
                }
                try waitAndRead()
            } catch {
                owner.log.warning(
                    "redis subscriber connection dropped",
                    metadata: ["redis.url": "\(owner.configuration.redactedURL)", "error": "\(error.message)"])
                context = nil
                owner.setConnected(false)
            }
        }
    }

    /// Connects and subscribes again to everything; on failure fails the new operations and waits
    /// out the back-off (woken early by new operations or close).
    private mutating func reconnect(failing operations: [RedisSubscriber.Operation]) -> Bool {
        do {
            let context = try RedisContext(configuration: owner.configuration)
            self.context = context
            owner.setConnected(true)
            backoff = owner.configuration.reconnectBackoff.lowerBound
            let carried = awaiting.flatMap(\.continuations)
            awaiting = []
            if hadConnection { owner.countReconnection() }
            hadConnection = true
            if !channels.isEmpty {
                try context.append(RedisCommand("SUBSCRIBE", arguments: Array(channels)))
                awaiting.append(Awaited(kind: .subscribe, remaining: channels.count, continuations: [], endsOperation: false))
            }
            if !patterns.isEmpty {
                try context.append(RedisCommand("PSUBSCRIBE", arguments: Array(patterns)))
                awaiting.append(Awaited(kind: .psubscribe, remaining: patterns.count, continuations: [], endsOperation: false))
            }
            for group in Self.bySlot(Array(shards)) {
                try context.append(RedisCommand("SSUBSCRIBE", arguments: group))
                awaiting.append(Awaited(kind: .ssubscribe, remaining: group.count, continuations: [], shards: group, endsOperation: false))
            }
            refusal = nil
            // Calls that were waiting when the connection dropped complete once the restore is confirmed.
            if awaiting.isEmpty {
                succeed(carried)
            } else {
                awaiting[awaiting.count - 1].continuations += carried
                awaiting[awaiting.count - 1].restores = true
                awaiting[awaiting.count - 1].endsOperation = true
            }
            if carried.count + channels.count + patterns.count + shards.count > 0 {
                owner.log.info(
                    "redis subscriber reconnected",
                    metadata: ["channels": "\(channels.count)", "patterns": "\(patterns.count)", "shards": "\(shards.count)"])
            }
            return true
        } catch {
            self.context = nil
            fail(operations.map(\.continuation), error)
            var pollfd = pollfd(fd: owner.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollfd, 1, Int32(backoff.milliseconds))
            drainWakePipe()
            backoff = min(backoff * 2, owner.configuration.reconnectBackoff.upperBound)
            return false
        }
    }

    private mutating func send(_ operation: RedisSubscriber.Operation, on context: RedisContext) throws(RedisError) {
        let kind = operation.kind
        var current = kind.isPattern ? patterns : kind.isShard ? shards : channels
        let expected: Int
        if operation.names.isEmpty {
            expected = max(current.count, 1)
            current.removeAll()
        } else {
            expected = operation.names.count
            if kind.adds { current.formUnion(operation.names) } else { current.subtract(operation.names) }
        }
        if kind.isPattern { patterns = current } else if kind.isShard { shards = current } else { channels = current }
        // A cluster takes the shard channels of one slot per command: one confirmation entry each.
        let commands = kind.isShard && !operation.names.isEmpty ? Self.bySlot(operation.names) : [operation.names]
        for (index, names) in commands.enumerated() {
            let last = index == commands.count - 1
            awaiting.append(
                Awaited(
                    kind: kind, remaining: names.isEmpty ? expected : names.count,
                    continuations: last ? [operation.continuation] : [],
                    shards: kind == .ssubscribe ? names : [], endsOperation: last))
            try context.append(RedisCommand(kind.rawValue.uppercased(), arguments: names))
        }
    }

    static func bySlot(_ channels: [String]) -> [[String]] {
        Dictionary(grouping: channels, by: HashSlot.of).sorted { $0.key < $1.key }.map(\.value)
    }

    /// Waits until the socket or the wake-up pipe is readable, then handles what arrived.
    private mutating func waitAndRead() throws(RedisError) {
        var fds = [pollfd(fd: owner.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        if let context { fds.append(pollfd(fd: context.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), -1)
        if ready < 0 { return }  // EINTR: go round again
        if fds[0].revents != 0 { drainWakePipe() }
        guard fds.count > 1, fds[1].revents != 0, let context else { return }
        try context.readAvailable()
        while let reply = try context.bufferedReply() { handle(reply) }
    }

    private mutating func handle(_ reply: RedisValue) {
        if let message = reply.errorMessage, !awaiting.isEmpty {
            // A refused (un)subscribe (CROSSSLOT, MOVED, an unknown command): its caller hears why.
            // Refused shard channels are not served here (any more): the owner places them again.
            let refused = awaiting.removeFirst()
            for channel in refused.shards where shards.remove(channel) != nil { owner.shardChannelLost(channel) }
            refusal = refusal ?? RedisError(server: message)
            if refused.endsOperation { finish(refused) }
            return
        }
        guard let parts = reply.array, let kind = parts.first?.string else { return }
        switch kind {
        case "message" where parts.count == 3, "smessage" where parts.count == 3:
            owner.deliver(RedisPubSubMessage(channel: parts[1].string ?? "", payload: parts[2].bytes ?? []))
        case "sunsubscribe" where awaiting.first?.kind != .sunsubscribe:
            // Not asked for: the channel's slot moved to another node, which now serves it.
            if let channel = parts.dropFirst().first?.string {
                shards.remove(channel)
                owner.shardChannelLost(channel)
            }
        case "pmessage" where parts.count == 4:
            owner.deliver(RedisPubSubMessage(channel: parts[2].string ?? "", pattern: parts[1].string, payload: parts[3].bytes ?? []))
        default:
            guard let confirmed = RedisSubscriber.Kind(rawValue: kind), let head = awaiting.first, head.kind == confirmed else { return }
            awaiting[0].remaining -= 1
            if awaiting[0].remaining <= 0 {
                let done = awaiting.removeFirst()
                if done.endsOperation { finish(done) }
            }
        }
    }

    /// Answers the callers of an operation whose last command was answered: refused if any of
    /// its commands was.
    private mutating func finish(_ done: Awaited) {
        if let refusal {
            fail(done.continuations, refusal)
        } else {
            succeed(done.continuations)
            if done.restores { owner.signalRestored() }
        }
        refusal = nil
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(owner.wakeDescriptor, &buffer, buffer.count) > 0 {}
    }

    private func succeed(_ continuations: [CheckedContinuation<Void, any Error>]) {
        for continuation in continuations { continuation.resume() }
    }

    private func fail(_ continuations: [CheckedContinuation<Void, any Error>], _ error: RedisError) {
        for continuation in continuations { continuation.resume(throwing: error) }
    }
}
