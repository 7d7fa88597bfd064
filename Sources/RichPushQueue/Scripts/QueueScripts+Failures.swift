import Hiredis

/// The failed-push totals by reason per app, beside the partition's other per-app
/// totals: what the console's "failed/s by reason" is the change of.
extension QueueScripts {
    /// An app's totals key, how many codes it may name, and the codes' counts as `code, count, …`.
    struct FailuresCall {
        let failures: String
        let most: Int
        let counts: [any RedisArgument]
    }

    /// → nothing. Adds each count to its code; a code the hash does not name yet is added only
    /// while it names fewer than `most` codes, and one that is not 1–48 bytes of
    /// `[A-Za-z0-9_.-]` never is: both count as `other`. So the hash stays bounded whatever the
    /// workers send (an old or a buggy one), at `most` codes and `other`.
    static let countFailures = LuaScript<FailuresCall, Never>(
        [
            .key("failures", \.failures), .number("most", \.most), .list("counts", { $0.counts }),
        ],
        body: """
            local OTHER = 'other'
            for i = countsFrom, countsTo - 1, 2 do
              local code, count = ARGV[i], tonumber(ARGV[i + 1]) or 0
              if #code > 48 or not string.find(code, '^[%w_%.%-]+$') then code = OTHER end
              if code ~= OTHER and redis.call('HEXISTS', failures, code) == 0 and redis.call('HLEN', failures) >= most then code = OTHER end
              if count > 0 then redis.call('HINCRBY', failures, code, count) end
            end
            return 0

            """)
}
