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

    /// → `{read, app, scheduled, retrying, …}` for `count` members of the delayed set from rank
    /// `start`: a member with an `attempt` or an `err` is a retry, any other a scheduled send.
    static let delayedSlice = LuaScript<ParkedSliceCall, Never>(
        [.key("delayed", \.key), .number("start", \.start), .number("count", \.count)],
        body: """
            local members = redis.call('ZRANGE', delayed, start, start + count - 1)
            local scheduled, retrying, order = {}, {}, {}
            for _, member in ipairs(members) do
              local fields = cmsgpack.unpack(member)
              local app, retry = '_', false
              for j = 1, #fields - 1, 2 do
                local name = fields[j]
                if name == 'app' then app = fields[j + 1] elseif name == 'err' or (name == 'attempt' and (tonumber(fields[j + 1]) or 0) > 0) then retry = true end
              end
              if not scheduled[app] then
                scheduled[app], retrying[app] = 0, 0
                order[#order + 1] = app
              end
              if retry then retrying[app] = retrying[app] + 1 else scheduled[app] = scheduled[app] + 1 end
            end
            local reply = {#members}
            for _, app in ipairs(order) do
              reply[#reply + 1] = app
              reply[#reply + 1] = scheduled[app]
              reply[#reply + 1] = retrying[app]
            end
            return reply

            """)

    /// → `{read, last id, app, dead, …}` for up to `count` dead letters after the id `start`.
    static let deadSlice = LuaScript<ParkedSliceCall, Never>(
        [.key("dead", \.key), .argument("start", \.start), .number("count", \.count)],
        body: """
            local from = start
            if from ~= '-' then from = '(' .. from end
            local entries = redis.call('XRANGE', dead, from, '+', 'COUNT', count)
            local counts, order = {}, {}
            for _, entry in ipairs(entries) do
              local fields = entry[2]
              local app = '_'
              for j = 1, #fields - 1, 2 do if fields[j] == 'app' then app = fields[j + 1] end end
              if not counts[app] then
                counts[app] = 0
                order[#order + 1] = app
              end
              counts[app] = counts[app] + 1
            end
            local last = start
            if #entries > 0 then last = entries[#entries][1] end
            local reply = {#entries, last}
            for _, app in ipairs(order) do
              reply[#reply + 1] = app
              reply[#reply + 1] = counts[app]
            end
            return reply

            """)
}
