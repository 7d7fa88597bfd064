import RichPushCore
import RichPushQueue

extension RichPushJobHandler {
    /// One push planned for one job.
    private struct Planned {
        let work: Int
        let push: OutgoingPush
        let key: DeliveryKey
    }

    /// Loads the installations of the whole batch, renders once per job, claims every pair, sends
    /// every claimed push in one adapter call and records all outcomes: one round trip per step.
    func deliver(_ work: [Work], results: inout [Result<Void, any Error>]) async throws {
        let ids = Array(Set(work.flatMap(\.targets)))
        let devices = Dictionary(try await installations.installations(ids: ids).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var planned: [Planned] = []
        for (offset, item) in work.enumerated() {
            guard let notification = item.notification, let expression = item.expression else { continue }
            let matching = item.targets.compactMap { devices[$0] }.filter { expression.matches(Set($0.tags)) }
            guard !matching.isEmpty else { continue }
            let clock = ContinuousClock.now
            let rendered: RenderedPush
            do {
                rendered = try renderer.render(notification, collapseID: item.job.origin)
            } catch {
                results[item.index] = .failure(JobError.permanent(error.message))
                continue
            }
            metrics.rendered(in: ContinuousClock.now - clock)
            planned += matching.map { Planned(work: offset, push: OutgoingPush(installation: $0, rendered: rendered), key: DeliveryKey(notification: item.id, installation: $0.id)) }
        }
        guard !planned.isEmpty else { return }

        let claims = try await notifications.claimDeliveries(planned.map(\.key))
        var outcomes: [Int: [DeliveryResult]] = [:]
        var toSend: [Planned] = []
        for (plan, claimed) in zip(planned, claims) {
            if claimed {
                toSend.append(plan)
            } else {
                outcomes[plan.key.notification, default: []].append(DeliveryResult(installation: plan.key.installation, counter: .duplicateSuppressed))
            }
        }
        metrics.suppressed(planned.count - toSend.count)

        let sent: [PushOutcome]
        let clock = ContinuousClock.now
        do {
            sent = try await adapter.send(toSend.map(\.push))
        } catch {
            try? await notifications.releaseDeliveries(toSend.map(\.key))
            throw JobError.retry("\(adapter.name) unreachable: \(error)")
        }
        metrics.sent(toSend.count, in: ContinuousClock.now - clock)

        let now = JobQueue.nowMilliseconds()
        var retryable: [Planned] = []
        var invalid: [Installation] = []
        var tally: [String: Int] = [:]
        for (plan, outcome) in zip(toSend, sent) {
            let result: DeliveryResult
            switch outcome {
            case .sent(let adapterID):
                result = DeliveryResult(installation: plan.key.installation, counter: .sent, adapterID: adapterID)
                tally["sent", default: 0] += 1
                if let createdAt = work[plan.work].notification?.createdAt { metrics.delivered(createdAt: createdAt, now: now) }
            case .held(let adapterID):
                result = DeliveryResult(installation: plan.key.installation, counter: .sent, adapterID: adapterID)
                tally["held", default: 0] += 1
            case .invalidToken(let reason):
                result = DeliveryResult(installation: plan.key.installation, counter: .invalidToken, error: reason)
                tally["invalid_token", default: 0] += 1
                invalid.append(plan.push.installation)
            case .failed(let reason, let canRetry):
                if canRetry { retryable.append(plan) }
                result = DeliveryResult(installation: plan.key.installation, counter: canRetry ? .retried : .failed, error: reason)
                tally[canRetry ? "retried" : "failed", default: 0] += 1
            }
            outcomes[plan.key.notification, default: []].append(result)
        }
        for (outcome, count) in tally { metrics.count(outcome, by: count) }
        for installation in invalid { _ = try? await installations.remove(installation) }
        try await notifications.recordDeliveries(outcomes)

        guard !retryable.isEmpty else { return }
        // Sent pushes keep their claims, so a retry only reaches the ones that failed.
        try await notifications.releaseDeliveries(retryable.map(\.key))
        var failedPerJob: [Int: Int] = [:]
        for plan in retryable { failedPerJob[plan.work, default: 0] += 1 }
        for (offset, failed) in failedPerJob {
            results[work[offset].index] = .failure(JobError.retry("\(failed) pushes failed on \(adapter.name)"))
        }
    }
}
