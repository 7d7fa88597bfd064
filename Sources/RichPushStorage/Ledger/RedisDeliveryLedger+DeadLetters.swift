import Hiredis
package import RichPushCore
import RichPushQueue

/// What the dead-lettering of a delivery job leaves in the status, and its undoing by a replay.
///
/// The ledger field of a pair marked failed so is `F`: the lease script takes it as free (a
/// replayed job sends it again) and takes the mark back when it leases it, so the counts stay
/// true whichever of the replay's revive and the worker's lease comes first.
extension RedisDeliveryLedger {
    package func recordDeadLettered(_ reasons: [DeliveryScope: String]) async throws {
        let scopes = Dictionary(grouping: reasons.keys, by: \.notification)
        let calls = byPartition(scopes) { keys, part in
            DeadLetteredCall(webhookWants: keys.webhookWants, webhookOutbox: keys.webhookOutbox, ttl: Int(retention.components.seconds),
                             now: JobQueue.nowMilliseconds(), items: part.flatMap { id, scopes in
                scopes.map { scope in
                    DeadLetteredItem(status: keys.status(id), devices: keys.devices(id), ledger: keys.ledger(id), record: keys.notification(id), id: id,
                                     reason: reasons[scope] ?? "", installations: scope.installations)
                }
            })
        }
        try await runAll(Self.deadLetteredScript, calls)
    }

    package func reviveDeadLettered(_ scopes: [DeliveryScope]) async throws {
        let calls = byPartition(Dictionary(grouping: scopes, by: \.notification)) { keys, part in
            part.flatMap { id, scopes in
                scopes.map { ReviveItem(status: keys.status(id), ledger: keys.ledger(id), installations: $0.installations) }
            }
        }
        try await runAll(Self.reviveScript, calls)
    }
}

extension RedisDeliveryLedger {
    /// The same ledger for `app`'s notifications, sharing this one's cache of records (and its
    /// budget: a worker's memory does not grow with the apps it serves).
    package func forApp(_ app: AppID) -> RedisDeliveryLedger {
        app == keys.app ? self : RedisDeliveryLedger(redis: redis, keys: keys.forApp(app), retention: retention, records: records.forApp(app))
    }

    /// Takes back what the dead-lettering of these deliveries marked, each in its app's ledger.
    package func reviveDeadLettered(_ deliveries: [RichPushJob.Delivery]) async throws {
        for (app, group) in Dictionary(grouping: deliveries, by: \.app).sorted(by: { $0.key < $1.key }) {
            try await forApp(app).reviveDeadLettered(group.map(\.scope))
        }
    }
}
