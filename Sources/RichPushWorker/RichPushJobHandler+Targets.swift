import Foundation
import RichPushCore
import RichPushQueue
import RichPushStorage

extension RichPushJobHandler {
    /// Every installation that may match each job's target: the union of the candidate tags'
    /// sets (all installations when a top-level `!` leaves no narrower set). The tags of the
    /// whole batch are scanned together. A sub-job keeps the installations it was given.
    func resolve(_ work: [Work]) async throws -> [Work] {
        let (sources, sourcesOf) = Self.sources(of: work)
        let members = sources.isEmpty ? [] : try await installations.installationIDs(tags: sources, pageSize: Self.scanPage)
        return work.enumerated().map { Self.assigning(members, sourcesOf[$0.offset], to: $0.element) }
    }

    /// As ``resolve(_:)`` with one page of each tag, one round trip for the whole batch: the
    /// jobs whose tags fit in it are resolved (`ready`); the others, audiences larger than a
    /// page, are returned apart (`large`), without targets, for ``splitLargeAudiences(_:)``. So
    /// a batch of many large fan-outs never holds all their audiences at once.
    func resolveSmall(_ work: [Work]) async throws -> (ready: [Work], large: [Work]) {
        let (sources, sourcesOf) = Self.sources(of: work)
        let pages = sources.isEmpty ? [] : try await installations.firstInstallationIDs(tags: sources, pageSize: Self.scanPage)
        var ready: [Work] = []
        var large: [Work] = []
        for (offset, item) in work.enumerated() {
            if let indexes = sourcesOf[offset], indexes.contains(where: { !pages[$0].complete }) {
                large.append(item)
            } else {
                ready.append(Self.assigning(pages.map(\.ids), sourcesOf[offset], to: item))
            }
        }
        return (ready, large)
    }

    /// Resolves and splits the large audiences one job at a time, and one job at a time in all
    /// the batches this handler runs (``fanOutGate``): a worker holds one large audience at once,
    /// whatever the number of fan-outs it reads. Returns the jobs whose audience turned out
    /// small enough to send at once.
    func splitLargeAudiences(_ large: [Work]) async throws -> [Work] {
        var rest: [Work] = []
        for item in large {
            await fanOutGate.acquire(1)
            do {
                rest += try await splitLargeFanOuts(try await resolve([item]))
            } catch {
                await fanOutGate.release(1)
                throw error
            }
            await fanOutGate.release(1)
        }
        return rest
    }

    /// Members per SSCAN page.
    static let scanPage = 1000

    /// The distinct tags the jobs without explicit installations need (nil: every installation),
    /// and which of them each job (by offset) reads.
    private static func sources(of work: [Work]) -> (sources: [String?], sourcesOf: [Int: [Int]]) {
        var sources: [String?] = []
        var position: [String?: Int] = [:]
        var sourcesOf: [Int: [Int]] = [:]
        for (offset, item) in work.enumerated() where item.explicit == nil {
            let tags: [String?] = item.expression?.candidateTags.map { $0.sorted().map(Optional.some) } ?? [nil]
            sourcesOf[offset] = tags.map { tag in
                if let known = position[tag] { return known }
                position[tag] = sources.count
                sources.append(tag)
                return sources.count - 1
            }
        }
        return (sources, sourcesOf)
    }

    /// The job with its targets: its explicit installations, or the union of its sources' members.
    private static func assigning(_ members: [[String]], _ indexes: [Int]?, to item: Work) -> Work {
        var item = item
        if let explicit = item.explicit {
            item.targets = explicit
        } else if let indexes {
            if indexes.count == 1 {
                item.targets = members[indexes[0]]
            } else {
                var seen = Set<String>()
                item.targets = indexes.flatMap { members[$0] }.filter { seen.insert($0).inserted }
            }
        }
        return item
    }

    /// Jobs whose audience (a target's members, or the installations a job names) is larger than
    /// `fanOutBatch` become sub-jobs for every worker to share, all enqueued in one pipeline;
    /// those jobs are then done here.
    func splitLargeFanOuts(_ work: [Work]) async throws -> [Work] {
        var requests: [JobRequest] = []
        var rest: [Work] = []
        var throttled: [(request: JobRequest, at: Int64)] = []
        var planned: [Int: Int] = [:]
        let now = JobQueue.nowMilliseconds()
        for item in work {
            // Throttled: sub-jobs of at most a second's worth of pushes, one due every
            // batch × 60 s / rate, so devices fetch the payload at most at that rate.
            if item.explicit == nil, !item.targets.isEmpty,
                let rate = item.notification?.delivery.throttlePerMinute ?? (defaultThrottlePerMinute > 0 ? defaultThrottlePerMinute : nil)
            {
                let batch = max(1, min(fanOutBatch, rate / 60))
                let interval = Int64(batch) * 60_000 / Int64(rate)
                for (index, start) in stride(from: 0, to: item.targets.count, by: batch).enumerated() {
                    let slice = Array(item.targets[start..<min(start + batch, item.targets.count)])
                    throttled.append(
                        (RichPushJob.request(notification: item.id, installations: slice, app: app), now + Int64(index) * interval))
                }
                planned[item.id] = item.targets.count
                logger.info(
                    "throttled fan-out",
                    metadata: [
                        "notification.id": "\(item.id)", "installations": "\(item.targets.count)",
                        "per.minute": "\(rate)", "batches": "\((item.targets.count + batch - 1) / batch)",
                    ])
                continue
            }
            // Named installations too (an NH batch direct send names up to 1,000): the sub-jobs
            // are no larger than a batch, so they are not split again.
            guard item.targets.count > fanOutBatch else {
                rest.append(item)
                continue
            }
            let targets = item.targets
            planned[item.id] = targets.count
            for start in stride(from: 0, to: targets.count, by: fanOutBatch) {
                requests.append(
                    RichPushJob.request(
                        notification: item.id, installations: Array(targets[start..<min(start + fanOutBatch, targets.count)]), app: app))
            }
            logger.info(
                "fan-out split",
                metadata: [
                    "notification.id": "\(item.id)", "installations": "\(targets.count)",
                    "batches": "\((targets.count + fanOutBatch - 1) / fanOutBatch)",
                ])
        }
        // Before the sub-jobs exist: a cancel that sees them also sees how many pushes they plan.
        try await ledger.recordPlannedFanOuts(planned)
        if !requests.isEmpty { try await queue.enqueue(requests) }
        if !throttled.isEmpty { try await queue.enqueue(throttled.map(\.request), at: throttled.map(\.at)) }
        return rest
    }
}
