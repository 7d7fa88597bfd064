import Foundation
package import RichPushCore
package import RichPushQueue

/// The rich-push job contract, the one place that says what a delivery job looks like: the store
/// writes it when a notification is created, the worker writes fan-out sub-jobs, and the worker
/// and `replay --force` read both.
///
/// - `rich-push`: the payload is the notification id in decimal (`42`) for the default app, and
///   `<app>:<id>` (`shop:42`) for another; the worker resolves its target.
/// - `rich-push-batch`: `{"id": n, "installations": [...]}`, a share of a large fan-out, with
///   `"app": "<app>"` for an app other than the default.
///
/// Jobs written before apps existed are the default app's, as their records are.
package enum RichPushJob {
    package static let type = "rich-push"
    package static let batchType = "rich-push-batch"

    /// A sub-job of a large fan-out: the notification and its share of the installations.
    struct Batch: Codable {
        var id: Int
        var installations: [String]
        /// Absent for the default app.
        var app: String?
    }

    /// What a rich-push job delivers: the app, its notification, and for a fan-out sub-job the
    /// installations it was given (nil: the notification's whole target).
    package struct Delivery: Sendable, Hashable {
        package var app: AppID
        package var notification: Int
        package var installations: [String]?

        package init(app: AppID, notification: Int, installations: [String]?) {
            self.app = app
            self.notification = notification
            self.installations = installations
        }

        /// The ledger's scope of this delivery (in its app's ledger).
        package var scope: DeliveryScope { DeliveryScope(notification: notification, installations: installations) }
    }

    /// The job that delivers notification `id` of `app` to its whole target: it waits in its
    /// app's `now` lane (fair scheduling), ahead of the app's fan-out sub-jobs.
    package static func request(notification id: Int, app: AppID = .default) -> JobRequest {
        JobRequest(type: type, payload: Array((app.isDefault ? String(id) : "\(app.rawValue):\(id)").utf8), app: app.rawValue)
    }

    /// The job that delivers notification `id` of `app` to these installations only (a fan-out's
    /// sub-job): it waits in its app's `bulk` lane.
    package static func request(notification id: Int, installations: [String], app: AppID = .default) -> JobRequest {
        // Encoding plain fields cannot fail.
        let batch = Batch(id: id, installations: installations, app: app.isDefault ? nil : app.rawValue)
        let payload = (try? JSONEncoder().encode(batch)) ?? Data()
        return JobRequest(type: batchType, payload: Array(payload), app: app.rawValue, lane: .bulk)
    }

    /// What a rich-push job delivers.
    package static func delivery(of job: Job) throws(JobError) -> Delivery {
        switch job.type {
        case batchType:
            guard let batch = try? JSONDecoder().decode(Batch.self, from: Data(job.payload)) else {
                throw JobError.permanent("a rich-push-batch job must be {\"id\": n, \"installations\": [...]}")
            }
            guard let app = batch.app.map(AppID.init(validating:)) ?? .default else {
                throw JobError.permanent("a rich-push-batch job names app '\(batch.app?.prefix(40) ?? "")', which is not an app id")
            }
            return Delivery(app: app, notification: batch.id, installations: batch.installations)
        case type:
            let text = String(decoding: job.payload.prefix(64), as: UTF8.self)
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let app = parts.count == 2 ? AppID(validating: parts[0]) : .default
            guard job.payload.count <= 64, let app, let id = Int(parts[parts.count - 1]) else {
                throw JobError.permanent(
                    "a rich-push job's payload is a notification id, or <app>:<id>, got '\(String(decoding: job.payload.prefix(40), as: UTF8.self))'"
                )
            }
            return Delivery(app: app, notification: id, installations: nil)
        default:
            throw JobError.permanent("'\(job.type)' is not a rich-push job type")
        }
    }

    /// What a rich-push job delivers; nil for another job type or a payload that cannot be read
    /// (such a job never leased anything).
    package static func scope(of job: Job) -> Delivery? {
        try? delivery(of: job)
    }
}
