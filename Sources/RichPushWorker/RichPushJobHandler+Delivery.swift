import Hiredis
import Metrics
import RichPushCore
import RichPushQueue

extension RichPushJobHandler {
    /// Delivers a batch of work in steps, one round trip each where it touches Redis or the
    /// provider: plan (the installations of the whole batch, rendered once per job and format),
    /// lease every pair, claim the devices (held ones and those another round is talking to wait)
    /// and screen out dead tokens, send every leased push (one adapter call per request to a
    /// device), account for each outcome, record them all with the claims released, and settle
    /// each job's result.
    func deliver(_ work: [Work], results: inout [Result<Void, any Error>]) async throws {
        let work = try await gateThrottled(work, results: &results)
        let planned = try await plan(work, results: &results)
        guard !planned.isEmpty else { return }
        var round = DeliveryRound(work: work)
        let leased = try await lease(planned, into: &round, results: &results)
        do {
            var (toSend, heldBack) = try await screen(leased, into: &round)
            toSend = try await choose(toSend, into: &round)
            let sent = try await send(toSend)
            account(zip(toSend, sent) + heldBack, into: &round)
            try await record(&round)
        } catch {
            await releaseClaims(of: round)
            throw error
        }
        settle(round, results: &results)
    }

    /// The pushes of each job: its notification rendered once per format its audience needs, to
    /// each installation the job targets that its tag expression matches (a device with a template
    /// gets its own rendering). A notification that cannot be rendered fails its job for good.
    private func plan(_ work: [Work], results: inout [Result<Void, any Error>]) async throws -> [PlannedPush] {
        let ids = Array(Set(work.flatMap(\.targets)))
        // The media key, once, when an alert may carry a signed URL.
        let mediaKey =
            work.contains { $0.notification.map { renderer.mode(for: $0) != .silent } ?? false } ? try await mediaSigner?.key() : nil
        let devices = Dictionary(
            try await installations.installations(ids: ids).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var planned: [PlannedPush] = []
        var templates = TemplatePushes()
        for (offset, item) in work.enumerated() {
            guard let notification = item.notification, let expression = item.expression else { continue }
            // A native send is written for one format: the other formats' devices are not its audience.
            let matching = item.targets.compactMap { devices[$0] }.filter { installation in
                expression.matches(Set(installation.tags))
                    && notification.native.map { $0.format == formats[installation.platform] ?? .apns } ?? true
            }
            guard !matching.isEmpty else { continue }
            let clock = ContinuousClock.now
            // Once per format the audience needs (APNs payload, FCM data message).
            var rendered: [PushFormat: RenderedPush] = [:]
            do {
                for format in Set(matching.map { formats[$0.platform] ?? .apns }) {
                    // The notification's id, whatever job carries it: a resend collapses on the device.
                    rendered[format] = try renderer.render(notification, format: format, collapseID: String(item.id))
                }
            } catch {
                results[item.index] = .failure(JobError.permanent(error.message))
                continue
            }
            let builtIns = renderer.builtInProperties(of: notification)
            let mode = renderer.mode(for: notification)
            // A native payload goes over its format's plain push once, for every device alike.
            let written = notification.native.flatMap { native in
                rendered[native.format].map { native.push(over: $0, now: JobQueue.nowMilliseconds()) }
            }
            for installation in matching {
                let format = formats[installation.platform] ?? .apns
                guard var push = rendered[format] else { continue }
                var failure: String?
                var chosen: (template: String, locale: String?)?
                if let written {
                    switch written {
                    case .success(let native): push = native
                    case .failure(let problem): failure = "invalid_header: \(problem.message)"
                    }
                } else if let properties = notification.properties,
                    let template = TemplatePushes.template(of: installation, for: expression)
                {
                    let own = templates.push(
                        template, for: installation, of: notification, properties: properties, format: format, plain: push,
                        builtIns: builtIns)
                    chosen = (template.name, own.locale)
                    switch own.push {
                    case .success(let rendered): push = rendered
                    case .failure(let problem): failure = problem.reason
                    }
                } else if notification.templatesOnly {
                    // NH's template send: a device without a template for it is not its audience.
                    continue
                } else if mode == .alert, let mediaKey {
                    // The alert carries a media URL of this device's own.
                    do {
                        push = try alertForm(of: notification, format: format, for: installation.id, key: mediaKey)
                    } catch {
                        failure = error.message
                    }
                }
                var plan = PlannedPush(
                    work: offset, push: OutgoingPush(notification: item.id, installation: installation, rendered: push),
                    key: DeliveryKey(notification: item.id, installation: installation.id), failure: failure,
                    template: chosen?.template, locale: chosen?.locale)
                if mode == .auto, chosen == nil, notification.native == nil { plan.auto = (notification, format) }
                planned.append(plan)
            }
            metrics.rendered(in: ContinuousClock.now - clock)
        }
        return planned
    }

    /// Leases every pair before its push and returns the pushes leased to this worker: recorded
    /// pairs are duplicates, suppressed; live leases of another worker are left to it, and their
    /// job comes back after them (deferred, spending no attempt); a device whose template failed
    /// fails alone, in the status, with its reason.
    private func lease(
        _ planned: [PlannedPush], into round: inout DeliveryRound, results: inout [Result<Void, any Error>]
    ) async throws -> [PlannedPush] {
        let leases = try await ledger.leaseDeliveries(planned.map(\.key), owner: round.owner, duration: leaseDuration)
        var toSend: [PlannedPush] = []
        var waiting = 0
        for (plan, lease) in zip(planned, leases) {
            switch lease {
            case .leased:
                toSend.append(plan)
            case .recorded:
                round.record(plan.result(.duplicateSuppressed), of: plan)
            case .leasedByOther(let remaining):
                round.leasedByOthers[plan.work] = max(round.leasedByOthers[plan.work] ?? .zero, remaining)
                waiting += 1
            }
        }
        metrics.suppressed(planned.count - toSend.count - waiting)
        for plan in toSend {
            guard let failure = plan.failure else { continue }
            round.record(plan.result(.failed, error: failure), of: plan)
        }
        toSend.removeAll { $0.failure != nil }
        for (offset, remaining) in round.leasedByOthers {
            let work = round.work[offset]
            results[work.index] = .failure(
                JobError.deferred("pushes of notification \(work.id) are leased by another worker", after: remaining + .milliseconds(250)))
        }
        return toSend
    }

    /// Takes out of the leased pushes those no request may go to now, in two round trips: a token
    /// a provider declared dead after this job resolved its device (recorded invalid), a device a
    /// provider asked to be left alone (a 429 for its token or subscription, seen by any worker),
    /// whose push is deferred as the adapter's own answer would have it, and a device another
    /// round has claimed (its request may be in flight, and its answer may ask to wait), whose
    /// push comes back shortly. The round claims the other devices until it records.
    private func screen(
        _ leased: [PlannedPush], into round: inout DeliveryRound
    ) async throws
        -> (toSend: [PlannedPush], heldBack: [(PlannedPush, PushOutcome)])
    {
        // The adapter gets its credentials first: waiting for another worker's token exchange
        // between this check and the requests would let a dead token through after it was marked.
        if goneTokens != nil || deviceBackOffs != nil, !leased.isEmpty { await adapter.prepare() }
        let devices = Array(Set(leased.map { Self.goneKey($0.push.installation) }))
        // The claims first, then the dead tokens: a device's previous round marks its dead token
        // before it releases the device, so a claim that succeeds is followed by a check that
        // sees the mark.
        let refusals = try await claimDevices(devices, owner: round.owner)
        round.claimed = deviceBackOffs == nil ? [] : devices.filter { refusals[$0] == nil }
        var (toSend, gone) = try await withoutGoneTokens(leased)
        for plan in gone { round.record(plan.result(.invalidToken, error: "the provider declared this token dead"), of: plan) }
        round.goneBefore = gone
        let checkedAt = JobQueue.nowMilliseconds()
        var heldBack: [(PlannedPush, PushOutcome)] = []
        if !refusals.isEmpty {
            toSend.removeAll { plan in
                switch refusals[Self.goneKey(plan.push.installation)] {
                case nil:
                    return false
                case .held(let end):
                    let wait = Duration.milliseconds(max(1, end - checkedAt))
                    heldBack.append(
                        (plan, .deferred(reason: "the provider asked to slow down for this device; again in \(wait)", after: wait)))
                case .inFlight:
                    let wait = Duration.milliseconds(Int64.random(in: 250...500))
                    heldBack.append((plan, .deferred(reason: "another worker is talking to this device; again in \(wait)", after: wait)))
                }
                return true
            }
        }
        return (toSend, heldBack)
    }

    /// Sends every push, one request to a device in flight at a time: a round that holds several
    /// notifications for a device sends them in waves, one adapter call each, so that an answer
    /// asking to wait (or declaring the token dead) is known before the next request to it is
    /// written (the adapter stops those). When the first call fails, nothing was sent: the leases
    /// are given back so the retry resends at once (if even that fails, they expire on their own
    /// and the retry waits for them); when a later one fails, its pushes and the rest failed,
    /// and are retried.
    private func send(_ toSend: [PlannedPush]) async throws -> [PushOutcome] {
        let clock = ContinuousClock.now
        let waves = Self.waves(of: toSend)
        var sent = [PushOutcome?](repeating: nil, count: toSend.count)
        for (number, wave) in waves.enumerated() {
            let outcomes: [PushOutcome]
            do {
                outcomes = try await adapter.send(wave.map { toSend[$0].push })
            } catch {
                // After the first wave some pushes went out: the rest failed, and are retried.
                guard number == 0 else {
                    for index in waves[number...].joined() {
                        sent[index] = .failed(reason: "\(adapter.name) unreachable: \(error)", retryable: true)
                    }
                    break
                }
                do {
                    try await ledger.releaseLeases(toSend.map(\.key))
                } catch {
                    throw JobError.retry("\(adapter.name) unreachable and the leases could not be released: \(error)", after: leaseDuration)
                        .on(platforms: toSend.map(\.push.installation.platform.rawValue))
                }
                throw JobError.retry("\(adapter.name) unreachable: \(error)").on(
                    platforms: toSend.map(\.push.installation.platform.rawValue))
            }
            for (index, outcome) in zip(wave, outcomes) { sent[index] = outcome }
        }
        metrics.sent(toSend.count, in: ContinuousClock.now - clock)
        return sent.map { $0 ?? .failed(reason: "not sent", retryable: true) }
    }

    /// The pushes' indices in waves: each device's first push in the first wave, its second in
    /// the second, and so on (a round usually needs one).
    static func waves(of pushes: [PlannedPush]) -> [[Int]] {
        var waves: [[Int]] = []
        var seen: [String: Int] = [:]
        for (index, plan) in pushes.enumerated() {
            let device = goneKey(plan.push.installation)
            let wave = seen[device, default: 0]
            seen[device] = wave + 1
            if wave == waves.count { waves.append([]) }
            waves[wave].append(index)
        }
        return waves
    }

    /// Each push's outcome: the device's entry and counter to record, what its job must retry or
    /// wait for, the dead tokens, a device a provider asked to be left alone (for the fleet), and
    /// the metrics by adapter, outcome and app.
    private func account(_ outcomes: [(PlannedPush, PushOutcome)], into round: inout DeliveryRound) {
        let now = JobQueue.nowMilliseconds()
        var routes: [Platform: (name: String, toDevice: Timer)] = [:]
        for (plan, outcome) in outcomes {
            let platform = plan.push.installation.platform
            let (route, toDevice) =
                routes[platform]
                ?? {
                    let route = (name: adapter.name(for: platform), toDevice: metrics.toDevice(adapter: adapter.name(for: platform)))
                    routes[platform] = route
                    return route
                }()
            let result: DeliveryResult
            switch outcome {
            case .sent(let adapterID):
                if let spent = plan.spent { round.estimates[plan.key.installation] = spent }
                round.acceptedPerJob[plan.work, default: 0] += 1
                result = plan.result(.sent, adapterID: adapterID)
                round.tally[.init(adapter: route, outcome: "sent"), default: 0] += 1
                if let createdAt = round.work[plan.work].notification?.createdAt { toDevice.recordMilliseconds(max(0, now - createdAt)) }
            case .held(let adapterID):
                if let spent = plan.spent { round.estimates[plan.key.installation] = spent }
                round.acceptedPerJob[plan.work, default: 0] += 1
                result = plan.result(.held, adapterID: adapterID)
                round.tally[.init(adapter: route, outcome: "held"), default: 0] += 1
            case .invalidToken(let reason):
                result = plan.result(.invalidToken, error: reason)
                round.failures[PushFailureCode.code(for: reason), default: 0] += 1
                round.tally[.init(adapter: route, outcome: "invalid_token"), default: 0] += 1
                round.invalid.append(plan.push.installation)
            case .failed(let reason, let canRetry):
                if canRetry { round.retryable.append(plan) }
                result = plan.result(canRetry ? .retried : .failed, error: reason)
                round.failures[PushFailureCode.code(for: reason), default: 0] += 1
                round.tally[.init(adapter: route, outcome: canRetry ? "retried" : "failed"), default: 0] += 1
            case .failedRetryAfter(let reason, let after):
                round.retryable.append(plan)
                round.waits[plan.work] = max(round.waits[plan.work] ?? .zero, after)
                result = plan.result(.retried, error: reason)
                round.failures[PushFailureCode.code(for: reason), default: 0] += 1
                round.tally[.init(adapter: route, outcome: "retried"), default: 0] += 1
            case .deferred(_, let after), .deviceDeferred(_, let after):
                // Not sent, and not a failure: the lease is given back when recording, nothing is
                // counted in the status (the device is still queued), and the job comes back after
                // `after`. A wait asked for the device holds its other pushes too, in every worker.
                if case .deviceDeferred = outcome {
                    let device = Self.goneKey(plan.push.installation)
                    round.backOffs[device] = max(round.backOffs[device] ?? 0, now + Int64(after.milliseconds))
                }
                round.deferred.append(plan)
                round.waits[plan.work] = max(round.waits[plan.work] ?? .zero, after)
                round.tally[.init(adapter: route, outcome: "deferred"), default: 0] += 1
                continue
            }
            round.record(result, of: plan)
        }
        var byOutcome: [String: Int] = [:]
        for (series, count) in round.tally {
            metrics.count(series, by: count)
            byOutcome[series.outcome, default: 0] += count
        }
        for (outcome, count) in byOutcome { metrics.count(app: app, outcome: outcome, by: count) }
    }

    /// Records every outcome. Recording releases the leases of retryable failures in the same
    /// script, so a retry reaches exactly the pushes that failed; a failure here fails the batch
    /// for retry. The dead tokens are marked for the fleet and then the round's devices released
    /// with their holds, and the failures counted by reason (a batch without failures writes
    /// nothing more), at the same time; then
    /// each failed push counts its own attempts (one round trip, in batches with failures only;
    /// after the record, so a record that failed, and is retried whole, spends none), and the
    /// registrations of dead tokens are removed.
    private func record(_ round: inout DeliveryRound) async throws {
        let now = JobQueue.nowMilliseconds()
        let settled = round
        async let markedAndReleased: Void = markGoneThenRelease(settled, now: now)
        async let counted: Void = countFailures(round.failures)
        async let estimated: Void = ledger.saveDeliveryEstimates(round.estimates)
        try await ledger.recordDeliveries(round.outcomes)
        for (offset, count) in round.acceptedPerJob { accepted.add(count, to: round.work[offset].job.id) }
        if !round.deferred.isEmpty { try await ledger.releaseLeases(round.deferred.map(\.key)) }
        try await markedAndReleased
        try await estimated
        await counted
        round.attempts =
            round.retryable.isEmpty
            ? [:]
            : try await ledger.countFailedAttempts(
                Dictionary(grouping: round.retryable.map(\.key), by: \.notification).mapValues { $0.map(\.installation) })
        for installation in round.invalid + round.goneBefore.map(\.push.installation) { _ = try await installations.remove(installation) }
    }

    /// Each job's result from its pushes: retried when some failed (the back-off grows with the
    /// attempts its pushes spent), deferred when some were held back; success otherwise.
    private func settle(_ round: DeliveryRound, results: inout [Result<Void, any Error>]) {
        let work = round.work
        var failedPerJob: [Int: Int] = [:]
        // The platforms of each job's failed or held pushes, kept with the job (``JobError/platforms``).
        var platforms: [Int: Set<String>] = [:]
        // The fewest and the most attempts its failed pushes have spent, each its own.
        var spentPerJob: [Int: (fewest: Int, most: Int)] = [:]
        for plan in round.retryable {
            failedPerJob[plan.work, default: 0] += 1
            platforms[plan.work, default: []].insert(plan.push.installation.platform.rawValue)
            let count = round.attempts[plan.key.notification]?[plan.key.installation] ?? work[plan.work].job.attempt + 1
            let known = spentPerJob[plan.work] ?? (count, count)
            spentPerJob[plan.work] = (min(known.fewest, count), max(known.most, count))
        }
        let deferredJobs = Set(round.deferred.map(\.work))
        var deferredPerJob: [Int: Int] = [:]
        for plan in round.deferred where failedPerJob[plan.work] == nil {
            deferredPerJob[plan.work, default: 0] += 1
            platforms[plan.work, default: []].insert(plan.push.installation.platform.rawValue)
        }
        for (offset, failed) in failedPerJob {
            // A failure spends an attempt of the push that failed; the back-off grows with the
            // attempts its pushes spent, and is never shorter than what the provider asked for.
            // The job is dead-lettered only when every push it still owes has spent its own
            // attempts: never with a push that spent fewer (one that failed late, after riding
            // along with failing neighbours), nor with one deferred in this run (none spent).
            let spent = spentPerJob[offset] ?? (work[offset].job.attempt + 1, work[offset].job.attempt + 1)
            let backOff = providerBackOff(afterAttempt: spent.most)
            results[work[offset].index] = .failure(
                JobError.retry(
                    "\(failed) pushes failed on \(adapter.name)", after: max(backOff, round.waits[offset] ?? .zero),
                    attempts: deferredJobs.contains(offset) ? 0 : spent.fewest
                )
                .on(platforms: platforms[offset] ?? []))
        }
        for (offset, held) in deferredPerJob {
            let after = max(round.waits[offset] ?? .seconds(1), round.leasedByOthers[offset].map { $0 + .milliseconds(250) } ?? .zero)
            results[work[offset].index] = .failure(
                JobError.deferred("\(held) pushes held back by \(adapter.name)'s limits", after: after)
                    .on(platforms: platforms[offset] ?? []))
        }
    }

    /// The back-off after `attempt` failures at a provider: `providerRetryBase` doubled per
    /// attempt up to five minutes, the upper half of it at random ("equal jitter"), so retries of
    /// a batch spread out and none comes back at once.
    func providerBackOff(afterAttempt attempt: Int) -> Duration {
        RetryPolicy(base: providerRetryBase, cap: .seconds(300)).ceiling(afterAttempt: attempt) * Double.random(in: 0.5...1)
    }

    /// Splits the pushes about to be sent into those whose token is alive and those a provider
    /// declared dead since their device registered (one round trip; none without `goneTokens`).
    private func withoutGoneTokens(_ planned: [PlannedPush]) async throws -> (alive: [PlannedPush], gone: [PlannedPush]) {
        guard let goneTokens, !planned.isEmpty else { return (planned, []) }
        let marks = try await goneTokens.gone(among: Array(Set(planned.map { Self.goneKey($0.push.installation) })))
        guard !marks.isEmpty else { return (planned, []) }
        var alive: [PlannedPush] = []
        var gone: [PlannedPush] = []
        for plan in planned {
            let installation = plan.push.installation
            if let since = marks[Self.goneKey(installation)], since >= installation.updatedAt {
                gone.append(plan)
            } else {
                alive.append(plan)
            }
        }
        return (alive, gone)
    }

    /// Claims `devices` for this round, for the fleet: those it could not claim, each with why
    /// (one round trip; none without `deviceBackOffs`). A claim lapses after the lease duration
    /// if the round never releases it.
    private func claimDevices(_ devices: [String], owner: String) async throws -> [String: DeviceClaimRefusal] {
        guard let deviceBackOffs, !devices.isEmpty else { return [:] }
        let now = JobQueue.nowMilliseconds()
        return try await deviceBackOffs.claim(devices, owner: owner, now: now, until: now + Int64(leaseDuration.milliseconds))
    }

    /// Marks the round's dead tokens, then releases its claims with the holds its answers asked
    /// for: the next round to claim one of those devices finds the mark.
    private func markGoneThenRelease(_ round: DeliveryRound, now: Int64) async throws {
        try await markGone(round.invalid, at: now)
        try await releaseDevices(round.claimed, owner: round.owner, holding: round.backOffs, now: now)
    }

    /// Releases the round's claims and holds `holding` for the whole fleet until their times, at once.
    private func releaseDevices(_ claimed: [String], owner: String, holding: [String: Int64], now: Int64) async throws {
        guard let deviceBackOffs, !claimed.isEmpty || !holding.isEmpty else { return }
        try await deviceBackOffs.release(claimed, owner: owner, holding: holding, now: now)
    }

    /// Releases the claims of a round that failed before it recorded: what it learned is not
    /// kept (its job is retried), and its devices are free for the others at once. If even this
    /// fails, the claims lapse on their own.
    private func releaseClaims(of round: DeliveryRound) async {
        do {
            try await releaseDevices(round.claimed, owner: round.owner, holding: round.backOffs, now: JobQueue.nowMilliseconds())
        } catch {
            logger.warning("could not release the claims of \(round.claimed.count) devices; they lapse in \(leaseDuration): \(error)")
        }
    }

    /// Marks the tokens of `installations` dead for the whole fleet.
    private func markGone(_ installations: [Installation], at time: Int64) async throws {
        guard let goneTokens, !installations.isEmpty else { return }
        try await goneTokens.markGone(Array(Set(installations.map(Self.goneKey))), at: time)
    }

    /// A token's name among the dead: its platform and handle.
    static func goneKey(_ installation: Installation) -> String { "\(installation.platform.rawValue):\(installation.handle)" }

    /// The batches of throttled fan-outs go out only while their notification stays within its
    /// limit over the last minute (batches are due one interval apart, but a late one and the next
    /// on time could otherwise go together): a batch that would exceed it is retried when the
    /// oldest batches of the minute make room.
    private func gateThrottled(_ work: [Work], results: inout [Result<Void, any Error>]) async throws -> [Work] {
        var gated: [(offset: Int, batch: ThrottledBatch)] = []
        for (offset, item) in work.enumerated() {
            guard let explicit = item.explicit, let first = explicit.first,
                let rate = item.notification?.delivery.throttlePerMinute ?? (defaultThrottlePerMinute > 0 ? defaultThrottlePerMinute : nil)
            else { continue }
            gated.append((offset, ThrottledBatch(notification: item.id, batch: first, pushes: explicit.count, perMinute: rate)))
        }
        guard !gated.isEmpty else { return work }
        let waits = try await ledger.admitThrottled(gated.map(\.batch))
        var refused = Set<Int>()
        for ((offset, batch), wait) in zip(gated, waits) where wait > .zero {
            refused.insert(offset)
            results[work[offset].index] = .failure(
                JobError.deferred("notification \(batch.notification) is at its \(batch.perMinute) pushes a minute", after: wait))
        }
        return work.enumerated().filter { !refused.contains($0.offset) }.map(\.element)
    }
}
