import Hiredis

/// Reading the delayed set (scheduled sends and retries) job by job, for the console's list of
/// them: one call per slice, the members unpacked by Redis (they are `cmsgpack`-packed fields).
extension QueueScripts {
    struct DelayedPageCall {
        let key: String
        /// The lowest due time (ms) to read from, and how many members of exactly that time to skip
        /// (they were on the previous slice).
        let from: Int64
        let skip: Int
        let count: Int
    }

    /// → `{due, member, fields}` per member due at or after `from` (ZRANGE BYSCORE LIMIT: each
    /// call is short), oldest due first; `fields` the member's field/value pairs.
    static let delayedPage = LuaScript<DelayedPageCall, Never>(
        [
            .key("delayed", \.key), .argument("from", \.from), .number("skip", \.skip), .number("count", \.count),
        ],
        body: """
            local members = redis.call('ZRANGE', delayed, from, '+inf', 'BYSCORE', 'LIMIT', skip, count, 'WITHSCORES')
            local reply = {}
            for i = 1, #members, 2 do
              reply[#reply + 1] = {members[i + 1], members[i], cmsgpack.unpack(members[i])}
            end
            return reply

            """)
}
