package import Hiredis

/// `richpush migrate`: converts the data under a prefix to ``SchemaVersion/current``, so that no
/// request reads another layout.
///
/// Schema 1 → 2 merges each notification's own status hash (`…:status:<id>`, written before
/// 2026-11-27) into its record's hash, as the readers of schema 1 read the two together: the
/// counters added up, the record's `state` and `planned` kept where it has them. Each hash is
/// merged and deleted by one script, so a run stopped midway is resumed by running it again; the
/// version is stored last, once a walk over every master (SCAN) found none left. A dry run writes
/// nothing and counts what a run would do.
package struct SchemaMigration: Sendable {
    package let redis: any RedisClient
    package let keys: StorageKeys
    /// Where SCAN walks: every master (one on a single Redis).
    package let nodes: [RedisConfiguration]
    /// Status hashes merged per pipelined round trip.
    package var batchSize = 500

    package init(redis: any RedisClient, keys: StorageKeys, nodes: [RedisConfiguration]) {
        self.redis = redis
        self.keys = keys
        self.nodes = nodes
    }

    /// What a run did, or a dry run would do.
    package struct Report: Sendable, Equatable {
        /// The version found (nil: no data) and the one stored after the run.
        package var from: Int?
        package var to: Int?
        /// Status hashes merged into their records.
        package var merged = 0
        /// Status hashes whose record had expired: deleted.
        package var orphaned = 0
        package var nodesScanned = 0
    }

    package func run(dryRun: Bool) async throws -> Report {
        let found = try await SchemaVersion.stored(redis: redis, keys: keys)
        var report = Report(from: found, to: found)
        if let found, found > SchemaVersion.current { throw SchemaVersion.Mismatch(found: found, prefix: keys.prefix) }
        guard found != SchemaVersion.current else { return report }
        if found != nil {
            for node in nodes {
                try await mergeStatusHashes(on: node, dryRun: dryRun, into: &report)
                report.nodesScanned += 1
            }
        }
        if !dryRun {
            try await redis.send("SET", keys.schemaVersion, SchemaVersion.current)
            report.to = SchemaVersion.current
        }
        return report
    }

    /// Whether `key` is a schema 1 status hash under `prefix`:
    /// `<prefix>[:app:<id>]:{<partition>}:status:<digits>` (SCAN's glob matches more).
    static func isStatusKey(_ key: String, prefix: String) -> Bool {
        guard key.hasPrefix(prefix + ":") else { return false }
        var rest = key.dropFirst(prefix.count + 1)
        if rest.hasPrefix("app:") {
            rest = rest.dropFirst(4)
            guard let end = rest.firstIndex(of: ":"), end > rest.startIndex, !rest[..<end].contains(where: { $0 == "{" || $0 == "}" })
            else {
                return false
            }
            rest = rest[rest.index(after: end)...]
        }
        guard rest.hasPrefix("{"), let close = rest.firstIndex(of: "}"), !rest[rest.index(after: rest.startIndex)..<close].contains("{")
        else {
            return false
        }
        rest = rest[rest.index(after: close)...]
        guard rest.hasPrefix(":status:") else { return false }
        let id = rest.dropFirst(":status:".count)
        return !id.isEmpty && id.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// SCANs one master for status hashes and merges them, a batch per round trip.
    private func mergeStatusHashes(on node: RedisConfiguration, dryRun: Bool, into report: inout Report) async throws {
        let connection = try await RedisConnection.connect(configuration: node)
        do {
            try await mergeStatusHashes(scanning: connection, dryRun: dryRun, into: &report)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    private func mergeStatusHashes(scanning connection: RedisConnection, dryRun: Bool, into report: inout Report) async throws {
        var cursor = "0"
        var pending: [String] = []
        repeat {
            let reply = try await connection.send("SCAN", cursor, "MATCH", "\(Self.globEscaped(keys.prefix)):*status:*", "COUNT", 1000)
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string else {
                throw RedisError.unexpected(reply, expected: "SCAN's cursor and keys")
            }
            cursor = next
            pending += (parts[1].array ?? []).compactMap(\.string).filter { Self.isStatusKey($0, prefix: keys.prefix) }
            while pending.count >= batchSize || (cursor == "0" && !pending.isEmpty) {
                let batch = Array(pending.prefix(batchSize))
                pending.removeFirst(batch.count)
                try await merge(batch, dryRun: dryRun, into: &report)
            }
        } while cursor != "0"
    }

    private func merge(_ statusKeys: [String], dryRun: Bool, into report: inout Report) async throws {
        let records = statusKeys.map(Self.recordKey(ofStatus:))
        let replies: [RedisValue]
        if dryRun {
            replies = try await redis.sendAll(records.map { RedisCommand("EXISTS", $0) })
        } else {
            replies = try await redis.run(Self.mergeScript, calls: zip(statusKeys, records).map { MergeCall(status: $0, record: $1) })
        }
        for reply in replies {
            switch try reply.throwingError().int {
            case 1: report.merged += 1
            case 0: report.orphaned += 1
            case -1: break  // merged meanwhile by another run
            default: throw RedisError.unexpected(reply, expected: "1, 0 or -1")
            }
        }
    }

    /// `…:status:<id>` → `…:notif:<id>` (the same hash tag: one slot), for a key that
    /// ``isStatusKey(_:prefix:)`` accepted.
    static func recordKey(ofStatus key: String) -> String {
        let id = key.split(separator: ":").last ?? ""
        return key.dropLast(":status:".count + id.count) + ":notif:" + id
    }

    /// SCAN's glob with the prefix's own `*?[]\` taken literally.
    static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "*?[]\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    struct MergeCall {
        let status: String, record: String
    }

    /// 1: the status hash merged into the record and deleted; 0: its record had expired, deleted;
    /// -1: no status hash (merged already).
    static let mergeScript = LuaScript<MergeCall, Never>(
        [
            .key("status", \.status), .key("record", \.record),
        ], constants: NotificationLua.constants,
        body: """
            if redis.call('EXISTS', status) == 0 then return -1 end
            if redis.call('EXISTS', record) == 0 then
              redis.call('DEL', status)
              return 0
            end
            local flat = redis.call('HGETALL', status)
            for i = 1, #flat, 2 do
              local name, value = flat[i], flat[i + 1]
              local count = tonumber(value)
              if name == FIELD_STATE or name == FIELD_PLANNED or not count or count ~= math.floor(count) then
                redis.call('HSETNX', record, name, value)
              else
                redis.call('HINCRBY', record, name, count)
              end
            end
            redis.call('DEL', status)
            return 1

            """)
}
