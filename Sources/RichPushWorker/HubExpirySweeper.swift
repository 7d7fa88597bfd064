import Foundation
package import Hiredis
package import Logging
import RichPushAdapters
package import RichPushCore
import ServiceLifecycle

/// Reports the simulated hub's held pushes whose ttl ran out before their device came back:
/// removes them from the hold and records them as `expired` in their notification's status (and
/// its webhooks' outbox). Runs in every worker that carries pushes through the hub; the expiry
/// script lets only one of them take each push.
package final class HubExpirySweeper: Service, Sendable {
    let redis: any RedisClient
    let offline: OfflineStore
    let ledger: any DeliveryLedger
    /// The ledger of an app other than the default, for the pushes held for it.
    let ledgers: @Sendable (AppID) -> any DeliveryLedger
    let interval: Duration
    let logger: Logger

    package init(
        redis: any RedisClient, prefix: String, ledger: any DeliveryLedger, ledgers: (@Sendable (AppID) -> any DeliveryLedger)? = nil,
        interval: Duration = .seconds(1), logger: Logger = Logger(label: "richpush.hub")
    ) {
        self.redis = redis
        self.offline = OfflineStore(prefix: prefix)
        self.ledger = ledger
        self.ledgers = ledgers ?? { _ in ledger }
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        // Cancelled at graceful shutdown, so a sleep does not hold up the worker's exit.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    // A full batch means more are due: go on at once.
                    if try await self.sweep() == Self.batch { continue }
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning("hub expiry sweep: \(error)")
                }
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    static let batch = 500

    /// Expires what is due now and records it; returns how many held pushes it took.
    @discardableResult
    package func sweep(now: Int64? = nil) async throws -> Int {
        let now = now ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let envelopes = try await offline.expire(now: now, limit: Self.batch, on: redis)
        var expired: [AppID: [Int: [String]]] = [:]
        for envelope in envelopes {
            // The envelope as the device reads it (``JSONValue``), so both read one shape one way.
            guard let object = JSONValue.parse(envelope), let notification = object["notification"]?.int,
                let installation = object["installation"]?.string
            else { continue }
            let app = object["app"]?.string.flatMap { AppID(validating: $0) } ?? .default
            expired[app, default: [:]][notification, default: []].append(installation)
        }
        // Taken from the hold but not recorded (Redis failed in between): the count is short by
        // these; the pushes themselves were expiring anyway.
        for (app, notifications) in expired.sorted(by: { $0.key < $1.key }) {
            try await (app.isDefault ? ledger : ledgers(app)).recordExpired(notifications)
        }
        return envelopes.count
    }
}
