import Hiredis

extension JobQueue {
    /// Reads the queue's numbers in one pipelined round trip; `perApp`: with the busy apps' numbers
    /// (fair scheduling's apps, ``QueueStats/apps``), read by one more script in the same pipeline.
    package func stats(perApp: Bool = false) async throws -> QueueStats {
        let c = configuration
        var commands = [
            RedisCommand("XLEN", c.streamKey),
            RedisCommand("XINFO", "GROUPS", c.streamKey),
            RedisCommand("XPENDING", c.streamKey, c.group),
            RedisCommand("ZCARD", c.delayedKey),
            RedisCommand("XLEN", c.deadKey),
            RedisCommand("XINFO", "CONSUMERS", c.streamKey, c.group),
            RedisCommand("HGETALL", c.countersKey),
            RedisCommand("HGET", c.schedulerKey, SchedulerField.waiting.rawValue),
        ]
        if perApp { commands.append(QueueScripts.appStats.command(appStatsCall())) }
        let replies = try await redis.pipeline(commands, loading: perApp ? [QueueScripts.appStats.script] : [])
        // A queue nobody has used yet has no stream: XINFO answers "no such key"; that is all zeros.
        // Any other error (LOADING while Redis restarts, …) is thrown, not read as zeros.
        for reply in replies {
            if let message = reply.errorMessage, !message.contains("no such key"), !message.hasPrefix("NOGROUP") {
                try reply.throwingError()
            }
        }
        let group = replies[1].array?.compactMap { Self.dictionary($0) }.first { $0["name"]?.string == c.group }
        let pendingSummary = replies[2].array ?? []
        let oldest = pendingSummary.count > 1 ? pendingSummary[1].string.flatMap(StreamID.init) : nil
        let now = UInt64(Self.nowMilliseconds())
        let consumers = (replies[5].array ?? []).compactMap(Self.dictionary).map { info in
            QueueStats.Consumer(
                name: info["name"]?.string ?? "?", pending: info["pending"]?.int ?? 0, idleMilliseconds: info["idle"]?.int ?? 0)
        }
        let counters = Self.dictionary(replies[6]) ?? [:]
        var stats = QueueStats(
            waiting: max(replies[7].int ?? 0, 0),
            length: replies[0].int ?? 0,
            // Without a group yet (no worker has started), every entry is waiting.
            lag: group.map { $0["lag"]?.int ?? 0 } ?? (replies[0].int ?? 0),
            pending: group?["pending"]?.int ?? 0,
            oldestPendingAgeMilliseconds: oldest.map { Int(now > $0.milliseconds ? now - $0.milliseconds : 0) } ?? 0,
            delayed: replies[3].int ?? 0,
            deadLetters: replies[4].int ?? 0,
            consumers: consumers.sorted { $0.name < $1.name },
            processed: counters["processed"]?.int ?? 0,
            retried: counters["retried"]?.int ?? 0,
            failed: counters["failed"]?.int ?? 0,
            deadLettered: counters["dead"]?.int ?? 0,
            processedByConsumer: Dictionary(
                uniqueKeysWithValues: counters.compactMap { name, value in
                    name.hasPrefix("processed:") ? (String(name.dropFirst("processed:".count)), value.int ?? 0) : nil
                }))
        if perApp { stats.apps = Self.appStats(from: replies[8], now: Int64(now)) }
        return stats
    }

    /// A flat `[name, value, …]` reply as a dictionary.
    static func dictionary(_ value: RedisValue) -> [String: RedisValue]? {
        guard let flat = value.array, flat.count % 2 == 0 else { return nil }
        var result: [String: RedisValue] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            if let name = flat[index].string { result[name] = flat[index + 1] }
        }
        return result
    }
}

extension JobQueue {
    /// Jobs accepted and not finished (waiting in lanes + lag + pending + delayed) in all `queues` (the partitions,
    /// on the first one's Redis), in one pipelined round trip: what back-pressure bounds.
    package static func backlog(of queues: [JobQueue]) async throws -> Int {
        guard let redis = queues.first?.redis else { return 0 }
        var commands: [RedisCommand] = []
        for c in queues.map(\.configuration) {
            commands += [
                RedisCommand("XLEN", c.streamKey), RedisCommand("XINFO", "GROUPS", c.streamKey), RedisCommand("ZCARD", c.delayedKey),
                RedisCommand("HGET", c.schedulerKey, SchedulerField.waiting.rawValue),
            ]
        }
        let replies = try await redis.pipeline(commands)
        var total = 0
        for (index, queue) in queues.enumerated() {
            let length = replies[4 * index], groups = replies[4 * index + 1], delayed = replies[4 * index + 2],
                waiting = replies[4 * index + 3]
            for reply in [length, groups, delayed, waiting] {
                if let message = reply.errorMessage, !message.contains("no such key") { try reply.throwingError() }
            }
            let group = groups.array?.compactMap { dictionary($0) }.first { $0["name"]?.string == queue.configuration.group }
            // Without a group yet (no worker has started), every entry is waiting.
            total +=
                (group.map { ($0["lag"]?.int ?? 0) + ($0["pending"]?.int ?? 0) } ?? (length.int ?? 0)) + (delayed.int ?? 0)
                + max(waiting.int ?? 0, 0)
        }
        return total
    }
}
