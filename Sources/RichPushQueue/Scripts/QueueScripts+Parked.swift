import Hiredis

/// The reads behind per-app numbers of parked jobs: scheduled and retrying (the delayed set) and
/// dead letters. Each reads one slice of its key, so no call holds Redis for long; the caller
/// walks the key slice by slice (``JobQueue/parkedJobs(limit:)``).
extension QueueScripts {
    struct ParkedSliceCall {
        let key: String
        /// Delayed set: the first rank; dead letters: the id to start after (`-`: the first).
        let start: String
        let count: Int
    }

    /// → `{read, scope, scheduled, retrying, …}` for `count` members of the delayed set from rank
    /// `start`: a member with an `attempt` or an `err` is a retry, any other a scheduled send.
    static let delayedSlice = LuaScript<ParkedSliceCall, Never>(
        [.key("delayed", \.key), .number("start", \.start), .number("count", \.count)],
        body: """
            local members = redis.call('ZRANGE', delayed, start, start + count - 1)
            local scheduled, retrying, order = {}, {}, {}
            for _, member in ipairs(members) do
              local fields = cmsgpack.unpack(member)
              local scope, retry = '_', false
              for j = 1, #fields - 1, 2 do
                local name = fields[j]
                if name == 'app' then scope = fields[j + 1] elseif name == 'err' or (name == 'attempt' and (tonumber(fields[j + 1]) or 0) > 0) then retry = true end
              end
              if not scheduled[scope] then
                scheduled[scope], retrying[scope] = 0, 0
                order[#order + 1] = scope
              end
              if retry then retrying[scope] = retrying[scope] + 1 else scheduled[scope] = scheduled[scope] + 1 end
            end
            local reply = {#members}
            for _, scope in ipairs(order) do
              reply[#reply + 1] = scope
              reply[#reply + 1] = scheduled[scope]
              reply[#reply + 1] = retrying[scope]
            end
            return reply

            """)

    /// → `{read, last id, scope, dead, …}` for up to `count` dead letters after the id `start`.
    static let deadSlice = LuaScript<ParkedSliceCall, Never>(
        [.key("dead", \.key), .argument("start", \.start), .number("count", \.count)],
        body: """
            local from = start
            if from ~= '-' then from = '(' .. from end
            local entries = redis.call('XRANGE', dead, from, '+', 'COUNT', count)
            local counts, order = {}, {}
            for _, entry in ipairs(entries) do
              local fields = entry[2]
              local scope = '_'
              for j = 1, #fields - 1, 2 do if fields[j] == 'app' then scope = fields[j + 1] end end
              if not counts[scope] then
                counts[scope] = 0
                order[#order + 1] = scope
              end
              counts[scope] = counts[scope] + 1
            end
            local last = start
            if #entries > 0 then last = entries[#entries][1] end
            local reply = {#entries, last}
            for _, scope in ipairs(order) do
              reply[#reply + 1] = scope
              reply[#reply + 1] = counts[scope]
            end
            return reply

            """)
}
