import Foundation
package import RichPushCore
package import RichPushQueue

/// The rich-push job contract, the one place that says what a delivery job looks like: the store
/// writes it when a notification is created, the worker writes fan-out sub-jobs, and the worker
/// and `replay --force` read both.
///
/// - `rich-push`: the payload is the notification id in decimal; the worker resolves its target.
/// - `rich-push-batch`: `{"id": n, "installations": [...]}`, a share of a large fan-out.
package enum RichPushJob {
    package static let type = "rich-push"
    package static let batchType = "rich-push-batch"

    /// A sub-job of a large fan-out: the notification and its share of the installations.
    struct Batch: Codable {
        var id: Int
        var installations: [String]
    }

    /// The job that delivers notification `id` to its whole target.
    package static func request(notification id: Int) -> JobRequest {
        JobRequest(type: type, payload: Array(String(id).utf8))
    }

    /// The job that delivers notification `id` to these installations only.
    package static func request(notification id: Int, installations: [String]) -> JobRequest {
        // Encoding two plain fields cannot fail.
        let payload = (try? JSONEncoder().encode(Batch(id: id, installations: installations))) ?? Data()
        return JobRequest(type: batchType, payload: Array(payload))
    }

    /// What a rich-push job delivers: its notification, and for a fan-out sub-job the
    /// installations it was given (nil: the notification's whole target).
    package static func delivery(of job: Job) throws(JobError) -> (notification: Int, installations: [String]?) {
        switch job.type {
        case batchType:
            guard let batch = try? JSONDecoder().decode(Batch.self, from: Data(job.payload)) else {
                throw JobError.permanent("a rich-push-batch job must be {\"id\": n, \"installations\": [...]}")
            }
            return (batch.id, batch.installations)
        case type:
            guard let id = Int(String(decoding: job.payload, as: UTF8.self)) else {
                throw JobError.permanent("a rich-push job's payload is a notification id, got '\(String(decoding: job.payload.prefix(40), as: UTF8.self))'")
            }
            return (id, nil)
        default:
            throw JobError.permanent("'\(job.type)' is not a rich-push job type")
        }
    }

    /// What a rich-push job delivers, as a ledger scope; nil for another job type or a payload
    /// that cannot be read (such a job never leased anything).
    package static func scope(of job: Job) -> DeliveryScope? {
        guard let delivery = try? delivery(of: job) else { return nil }
        return DeliveryScope(notification: delivery.notification, installations: delivery.installations)
    }
}
