import Hiredis
package import RichPushCore
import RichPushQueue

/// The delivery ledger (``DeliveryLedger``): each (notification, installation) pair leased before
/// its push and recorded after it, with the device's entry in the status, one script call per
/// partition for a whole batch.
extension RedisDeliveryLedger {
    package func leaseDeliveries(_ keys: [DeliveryKey], owner: String, duration: Duration) async throws -> [DeliveryLease] {
        guard !keys.isEmpty else { return [] }
        let grouped = Dictionary(grouping: keys.indices, by: { keys[$0].notification })
        // One script call per partition (its ledgers share its hash tag), all in one round trip.
        let partitions = Dictionary(grouping: grouped.keys, by: { self.keys.partitionIndex(ofNotification: $0) }).map { Array($0.value) }
        var calls: [LeaseCall] = []
        var order: [[Int]] = []
        for ids in partitions {
            calls.append(LeaseCall(owner: owner, now: JobQueue.nowMilliseconds(), lease: duration.milliseconds, ttl: Int(retention.components.seconds), items: ids.map { id in
                LeaseItem(ledger: self.keys.ledger(id), status: self.keys.status(id), devices: self.keys.devices(id),
                          installations: grouped[id]!.map { keys[$0].installation })
            }))
            order.append(ids.flatMap { grouped[$0]! })
        }
        let replies = try await redis.run(Self.leaseScript, calls: calls)
        var leases = [DeliveryLease](repeating: .recorded, count: keys.count)
        for (indices, reply) in zip(order, replies) {
            let codes = try reply.throwingError().array ?? []
            guard codes.count == indices.count else { throw RedisError.unexpected(reply, expected: "\(indices.count) lease codes") }
            for (index, code) in zip(indices, codes) {
                let value = code.int ?? 0
                leases[index] = value == -1 ? .leased : value == 0 ? .recorded : .leasedByOther(remaining: .milliseconds(value))
            }
        }
        return leases
    }

    package func releaseLeases(_ keys: [DeliveryKey]) async throws {
        guard !keys.isEmpty else { return }
        let grouped = Dictionary(grouping: keys, by: \.notification)
        let ttl = Int(retention.components.seconds)
        // `T`, not a deleted field: free to lease again, and still addressed (see leaseScript).
        try await redis.sendAll(grouped.flatMap { id, pairs in
            var command = RedisCommand("HSET", self.keys.ledger(id))
            for pair in pairs {
                command.append(pair.installation)
                command.append(LedgerMark.tried.rawValue)
            }
            return [command, RedisCommand("EXPIRE", self.keys.ledger(id), ttl, "NX")]
        })
    }

    /// Clears the ledger entries of notification `id`, for the given installations or for all,
    /// so that a forced replay pushes to them again. Returns how many entries existed.
    package func forgetDeliveries(id: Int, installations: [String]? = nil) async throws -> Int {
        guard let installations else {
            let count = try await redis.send("HLEN", keys.ledger(id)).int ?? 0
            try await redis.send("DEL", keys.ledger(id))
            return count
        }
        guard !installations.isEmpty else { return 0 }
        var command = RedisCommand("HDEL", keys.ledger(id))
        for installation in installations { command.append(installation) }
        return try await redis.send(command).int ?? 0
    }


    /// One script call per partition, all in one pipeline: for each notification its counters,
    /// per-device entries (JSON written by hand: this runs for every push) and its state.
    package func recordDeliveries(_ results: [Int: [DeliveryResult]]) async throws {
        let calls = byPartition(results.filter { !$0.value.isEmpty }) { keys, part in
            RecordCall(webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds), now: JobQueue.nowMilliseconds(),
                       items: part.map { id, results in
                var counts: [DeliveryCounter: Int] = [:]
                var devices: [any RedisArgument] = []
                var released: [any RedisArgument] = []
                for result in results {
                    counts[result.counter, default: 0] += 1
                    guard result.counter != .duplicateSuppressed else { continue }
                    devices.append(result.installation)
                    devices.append(NotificationLua.deviceEntry(state: result.counter.rawValue, adapterID: result.adapterID, error: result.error,
                                                                   template: result.template, locale: result.locale))
                    if result.counter == .retried { released.append(result.installation) }
                }
                var counters: [any RedisArgument] = []
                for (counter, count) in counts { counters += [counter.rawValue, count] as [any RedisArgument] }
                let state = counts[.sent, default: 0] + counts[.held, default: 0] > 0 ? DeliveryState.sent.rawValue : ""
                return RecordItem(status: keys.status(id), ledger: keys.ledger(id), record: keys.notification(id), id: id, state: state,
                                  counters: counters, released: released, devices: devices)
            })
        }
        try await runAll(Self.recordScript, calls)
    }

    package func recordExpired(_ expired: [Int: [String]]) async throws {
        let calls = byPartition(expired.filter { !$0.value.isEmpty }) { keys, part in
            ExpiredCall(webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds), now: JobQueue.nowMilliseconds(),
                        items: part.map { id, installations in
                ExpiredItem(status: keys.status(id), devices: keys.devices(id), record: keys.notification(id), ledger: keys.ledger(id), id: id,
                            installations: installations)
            })
        }
        try await runAll(Self.expiredScript, calls)
    }

    package func admitThrottled(_ batches: [ThrottledBatch]) async throws -> [Duration] {
        guard !batches.isEmpty else { return [] }
        let parts = Dictionary(grouping: batches.indices, by: { keys.partitionIndex(ofNotification: batches[$0].notification) }).map(\.value)
        let calls = parts.map { indices in
            ThrottleCall(now: JobQueue.nowMilliseconds(), items: indices.map { batches[$0] }.map { batch in
                ThrottleItem(key: keys.throttle(batch.notification), member: "\(batch.batch):\(batch.pushes)", pushes: batch.pushes, limit: batch.perMinute)
            })
        }
        let replies = try await redis.run(Self.throttleScript, calls: calls)
        var waits = [Duration](repeating: .zero, count: batches.count)
        for (indices, reply) in zip(parts, replies) {
            let values = (try reply.throwingError().array ?? []).map { Duration.milliseconds($0.int ?? 0) }
            guard values.count == indices.count else { throw RedisError.unexpected(reply, expected: "\(indices.count) waits") }
            for (index, wait) in zip(indices, values) { waits[index] = wait }
        }
        return waits
    }

    /// One script call per partition of the notifications in `items`, built by `call` from that
    /// partition's keys and its share of the items.
    func byPartition<Value, Call>(_ items: [Int: Value], _ call: (StorageKeys, [(Int, Value)]) -> Call) -> [Call] {
        Dictionary(grouping: items, by: { keys.partitionIndex(ofNotification: $0.key) })
            .map { call(keys.inPartition($0.key), $0.value.map { ($0.key, $0.value) }) }
    }

    func runAll<Call, Item>(_ script: LuaScript<Call, Item>, _ calls: [Call]) async throws {
        guard !calls.isEmpty else { return }
        for reply in try await redis.run(script, calls: calls) { try reply.throwingError() }
    }
}
