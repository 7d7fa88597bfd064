import Foundation
public import Logging
public import RichPushCore
public import RichPushQueue

/// Runs rich-push jobs: resolves the notification's target to installations, renders the push
/// once, sends it through the adapter in batches and records every outcome on the notification.
///
/// A target larger than `fanOutBatch` installations is split into `rich-push-batch` sub-jobs, so
/// many workers share one fan-out. Each (notification, installation) pair is claimed with
/// `SET NX` before its push, so a redelivered or replayed job never pushes twice to a device.
public struct RichPushJobHandler: JobHandler {
    public static let type = "rich-push"
    public static let batchType = "rich-push-batch"

    let notifications: any NotificationStore
    let installations: any InstallationStore
    let queue: JobQueue
    let adapter: any PushAdapter
    let renderer: PushRenderer
    let fanOutBatch: Int
    let logger: Logger

    public init(notifications: any NotificationStore, installations: any InstallationStore, queue: JobQueue, adapter: any PushAdapter,
                renderer: PushRenderer, fanOutBatch: Int = 500, logger: Logger = Logger(label: "richpush.worker")) {
        self.notifications = notifications
        self.installations = installations
        self.queue = queue
        self.adapter = adapter
        self.renderer = renderer
        self.fanOutBatch = max(1, fanOutBatch)
        self.logger = logger
    }

    /// Registers this handler for both job types.
    public func register(in handlers: inout JobHandlers) {
        handlers.register(self, for: Self.type)
        handlers.register(self, for: Self.batchType)
    }

    struct Batch: Codable {
        var id: Int
        var installations: [String]
    }

    public func handle(_ job: Job) async throws {
        if job.type == Self.batchType {
            guard let batch = try? JSONDecoder().decode(Batch.self, from: Data(job.payload)) else {
                throw JobError.permanent("a rich-push-batch job must be {\"id\": n, \"installations\": [...]}")
            }
            let (notification, expression) = try await load(batch.id)
            try await deliver(notification, expression: expression, to: batch.installations, collapseID: job.origin)
            return
        }
        guard let id = Int(String(decoding: job.payload, as: UTF8.self)) else {
            throw JobError.permanent("a rich-push job's payload is a notification id, got '\(String(decoding: job.payload.prefix(40), as: UTF8.self))'")
        }
        let (notification, expression) = try await load(id)
        let targets = try await resolve(expression)
        if targets.count <= fanOutBatch {
            try await deliver(notification, expression: expression, to: targets, collapseID: job.origin)
            return
        }
        // A large audience: sub-jobs for every worker to share, enqueued in one pipeline.
        let batches = stride(from: 0, to: targets.count, by: fanOutBatch).map { start in
            JobRequest(type: Self.batchType, payload: Array(try! JSONEncoder().encode(Batch(id: id, installations: Array(targets[start..<min(start + fanOutBatch, targets.count)])))))
        }
        try await queue.enqueue(batches)
        logger.info("fan-out split", metadata: ["notification.id": "\(id)", "installations": "\(targets.count)", "batches": "\(batches.count)"])
    }

    private func load(_ id: Int) async throws -> (RichNotification, TagExpression) {
        guard let notification = try await notifications.notification(id: id) else {
            throw JobError.drop("notification \(id) no longer exists (expired or never stored)")
        }
        do {
            return (notification, try TagExpression(parsing: notification.target))
        } catch {
            throw JobError.permanent("notification \(id) has an invalid target: \(error.message)")
        }
    }

    /// Every installation that may match: the union of the candidate tags' sets (all
    /// installations when a top-level `!` leaves no narrower set), scanned in batches.
    private func resolve(_ expression: TagExpression) async throws -> [String] {
        let sources: [String?] = expression.candidateTags.map { $0.sorted().map(Optional.some) } ?? [nil]
        var seen = Set<String>()
        var ordered: [String] = []
        for source in sources {
            var cursor = 0
            repeat {
                let page = try await installations.installationIDs(tag: source, cursor: cursor, count: 1000)
                for id in page.ids where seen.insert(id).inserted { ordered.append(id) }
                cursor = page.next
            } while cursor != 0
        }
        return ordered
    }

    private func deliver(_ notification: RichNotification, expression: TagExpression, to ids: [String], collapseID: String) async throws {
        let devices = try await installations.installations(ids: ids).filter { expression.matches(Set($0.tags)) }
        guard !devices.isEmpty else { return }
        let rendered: RenderedPush
        do {
            rendered = try renderer.render(notification, collapseID: collapseID)
        } catch {
            throw JobError.permanent(error.message)
        }
        let claims = try await notifications.claimDeliveries(id: notification.id, installations: devices.map(\.id))
        var results: [DeliveryResult] = []
        var toSend: [OutgoingPush] = []
        for (device, claimed) in zip(devices, claims) {
            if claimed {
                toSend.append(OutgoingPush(installation: device, rendered: rendered))
            } else {
                results.append(DeliveryResult(installation: device.id, counter: .duplicateSuppressed))
            }
        }
        let outcomes: [PushOutcome]
        do {
            outcomes = try await adapter.send(toSend)
        } catch {
            try? await notifications.releaseDeliveries(id: notification.id, installations: toSend.map(\.installation.id))
            throw JobError.retry("\(adapter.name) unreachable: \(error)")
        }
        var retryable: [String] = []
        for (push, outcome) in zip(toSend, outcomes) {
            switch outcome {
            case .sent(let adapterID), .held(let adapterID):
                results.append(DeliveryResult(installation: push.installation.id, counter: .sent, adapterID: adapterID))
            case .invalidToken(let reason):
                results.append(DeliveryResult(installation: push.installation.id, counter: .invalidToken, error: reason))
                _ = try? await installations.remove(push.installation)
            case .failed(let reason, let canRetry):
                if canRetry { retryable.append(push.installation.id) }
                results.append(DeliveryResult(installation: push.installation.id, counter: canRetry ? .retried : .failed, error: reason))
            }
        }
        try await notifications.recordDeliveries(id: notification.id, results: results)
        if !retryable.isEmpty {
            // Sent pushes keep their claims, so the retry only reaches the ones that failed.
            try await notifications.releaseDeliveries(id: notification.id, installations: retryable)
            throw JobError.retry("\(retryable.count) of \(toSend.count) pushes failed on \(adapter.name)")
        }
    }
}
