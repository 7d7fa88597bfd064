import Hiredis
import Synchronization

/// Notification ids reserved a block at a time with INCRBY: unique decimal integers, increasing
/// per process, with gaps between replicas' blocks; saves the INCR round trip on most creations.
final class IDBlocks: Sendable {
    private let key: String
    private let schemaKey: String
    private let block: Int
    private let range = Mutex<(next: Int, end: Int)>((0, 0))

    /// `key` is the sequence, `schemaKey` the data's ``SchemaVersion`` (in the sequence's slot).
    init(key: String, schemaKey: String, block: Int) {
        self.key = key
        self.schemaKey = schemaKey
        self.block = max(1, block)
    }

    /// Drops what is left of the current block (its ids were found taken).
    func discardBlock() {
        range.withLock { $0 = (0, 0) }
    }

    /// `count` ids: what is left of the current block first, then one INCRBY for the rest and a
    /// new block (kept unless another task refilled meanwhile: its ids are then a gap).
    func next(_ redis: any RedisClient, count: Int = 1) async throws -> [Int] {
        var taken = take(upTo: count)
        guard taken.count < count else { return taken }
        let need = count - taken.count
        let size = need + block
        let reply = try await redis.run(
            Self.reserveScript, Reserve(sequence: key, schema: schemaKey, size: size, current: SchemaVersion.current))
        guard let end = reply.int else { throw RedisError.unexpected(reply, expected: "the sequence's new end") }
        let first = end - size + 1
        taken += first..<(first + need)
        range.withLock { range in
            if range.next >= range.end { range = (first + need, end + 1) }
        }
        return taken
    }

    private func take(upTo count: Int) -> [Int] {
        range.withLock { range in
            let taken = Array(range.next..<min(range.end, range.next + count))
            range.next += taken.count
            return taken
        }
    }

    struct Reserve {
        let sequence: String, schema: String
        let size: Int, current: Int
    }

    /// INCRBY; the first ids of a new sequence also stamp the data's schema version (written by
    /// this build: what ``SchemaVersion/checkAtStart(redis:keys:)`` finds).
    static let reserveScript = LuaScript<Reserve, Never>(
        [
            .key("sequence", \.sequence), .key("schema", \.schema), .argument("size", \.size), .argument("current", \.current),
        ],
        body: """
            local last = redis.call('INCRBY', sequence, size)
            if last == tonumber(size) then redis.call('SET', schema, current, 'NX') end
            return last

            """)
}
