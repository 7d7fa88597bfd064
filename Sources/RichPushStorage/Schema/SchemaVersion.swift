package import Hiredis

/// The layout of RichPush's data in Redis, by number, kept in ``StorageKeys/schemaVersion``.
///
/// - 1: before the key existed. A notification created before 2026-11-27 may keep its status
///   (state, counters) in a hash of its own, `…:status:<id>`, beside its record.
/// - 2: every status in its record's hash; no `…:status:<id>` hash.
///
/// The API and the workers check the version when they start (``checkAtStart(redis:keys:)``) and
/// refuse data they do not read: what `richpush migrate` converts is never read per request.
package enum SchemaVersion {
    /// The layout this build reads and writes.
    package static let current = 2

    /// Why a process does not start on the data it found.
    package struct Mismatch: Error, CustomStringConvertible {
        package let found: Int
        package let prefix: String
        package var description: String {
            if found > current {
                return "the data under prefix '\(prefix)' is schema \(found), written by a newer richpush; this one reads schema \(current)"
            }
            return "the data under prefix '\(prefix)' is schema \(found); this richpush reads schema \(current): run `richpush migrate` "
                + "(see docs/upgrading.md)"
        }
    }

    /// The version of the data under `keys.prefix`, stamping ``current`` on a Redis that holds
    /// none yet (no notification sequence: no data at all); throws
    /// ``Mismatch`` for data of another version.
    package static func checkAtStart(redis: any RedisClient, keys: StorageKeys) async throws {
        let found = try await redis.run(
            stampScript, Stamp(schema: keys.schemaVersion, sequence: keys.notificationSequence, current: current))
        guard let version = found.int else { throw RedisError.unexpected(found, expected: "a schema version") }
        guard version == current else { throw Mismatch(found: version, prefix: keys.prefix) }
    }

    /// The version stored; 1 for data without one (see ``SchemaVersion``), nil for no data.
    package static func stored(redis: any RedisClient, keys: StorageKeys) async throws -> Int? {
        let replies = try await redis.sendAll([RedisCommand("GET", keys.schemaVersion), RedisCommand("EXISTS", keys.notificationSequence)])
        if let version = replies[0].int { return version }
        return replies[1].int == 1 ? 1 : nil
    }

    struct Stamp {
        let schema: String, sequence: String
        let current: Int
    }

    /// The stored version; with none, 1 when the notification sequence exists (schema 1 data),
    /// else ``current``, stored. The two keys share a slot (``StorageKeys/schemaVersion``).
    static let stampScript = LuaScript<Stamp, Never>(
        [
            .key("schema", \.schema), .key("sequence", \.sequence), .argument("current", \.current),
        ],
        body: """
            local version = redis.call('GET', schema)
            if version then return tonumber(version) end
            if redis.call('EXISTS', sequence) == 1 then return 1 end
            redis.call('SET', schema, current)
            return tonumber(current)

            """)
}
