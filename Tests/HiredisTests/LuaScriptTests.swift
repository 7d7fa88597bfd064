import Hiredis
import RedisTestSupport
import Testing

/// ``LuaScript``: the prelude generated from a declaration, and a real Redis running a batched
/// script with a list and a section per item, filled from typed values.
@Suite("Lua scripts by name")
struct LuaScriptTests {
    struct Call {
        let log: String, now: Int
        let items: [Item]
    }

    struct Item {
        let counter: String, by: Int
        let tags: [any RedisArgument]
        let note: Note?
    }

    struct Note {
        let key: String, text: String
    }

    static let script = LuaScript<Call, Item>(
        [.key("log", \.log), .number("now", \.now)], items: \.items,
        each: [
            .key("counter", \.counter), .number("by", \.by), .list("tags", { $0.tags }),
            .section("note", \.note, [.key("noteKey", \.key), .argument("text", \.text)]),
        ], constants: [.string("MARK", "m"), .number("UNUSED", 1)],
        before: """
            local out = {}

            """,
        eachItem: """
            local total = redis.call('INCRBY', counter, by)
            for i = tagsFrom, tagsTo do redis.call('RPUSH', log, ARGV[i]) end
            if note then redis.call('SET', noteKey, MARK .. text) end
            out[#out + 1] = total + tagsCount + now

            """,
        after: """
            return out

            """)

    @Test func thePreludeBindsEachNameWhereTheEncoderPutsIt() {
        #expect(
            Self.script.script.source == """
                local MARK = 'm'
                local _k, _a = 1, 1
                local log, now = KEYS[1], tonumber(ARGV[1])
                local out = {}
                _k, _a = 2, 2
                while _k <= #KEYS do
                  local counter, by, tagsCount, tagsFrom = KEYS[_k], tonumber(ARGV[_a]), tonumber(ARGV[_a + 1]), _a + 2
                  local tagsTo = tagsFrom + tagsCount - 1
                  _a = tagsTo + 1
                  local note = ARGV[_a] == '1'
                  local noteKey, text
                  _k, _a = _k + 1, _a + 1
                  if note then
                    noteKey, text = KEYS[_k], ARGV[_a]
                    _k, _a = _k + 1, _a + 1
                  end
                  repeat
                local total = redis.call('INCRBY', counter, by)
                for i = tagsFrom, tagsTo do redis.call('RPUSH', log, ARGV[i]) end
                if note then redis.call('SET', noteKey, MARK .. text) end
                out[#out + 1] = total + tagsCount + now
                  until true
                end
                return out

                """)
        let call = Call(
            log: "l", now: 100,
            items: [
                Item(counter: "c", by: 2, tags: ["a", "b"], note: Note(key: "n", text: "t")),
                Item(counter: "c", by: 3, tags: [], note: nil),
            ])
        let (keys, arguments) = Self.script.encode(call)
        #expect(keys.map { "\($0)" } == ["l", "c", "n", "c"])
        #expect(arguments.map { "\($0)" } == ["100", "2", "2", "a", "b", "1", "t", "3", "0", "0"])
    }

    @Test func aBatchedCallRunsItemByItem() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let prefix = uniqueKeyPrefix()
            let call = Call(
                log: prefix + "{t}log", now: 100,
                items: [
                    Item(counter: prefix + "{t}c", by: 2, tags: ["a", "b"], note: Note(key: prefix + "{t}n", text: "t")),
                    Item(counter: prefix + "{t}c", by: 3, tags: [], note: nil),
                    Item(counter: prefix + "{t}d", by: 1, tags: ["c"], note: nil),
                ])
            let reply = try await redis.run(Self.script, call)
            #expect(reply.array?.compactMap(\.int) == [104, 105, 102])
            #expect(try await redis.send("LRANGE", prefix + "{t}log", 0, -1).array?.compactMap(\.string) == ["a", "b", "c"])
            #expect(try await redis.send("GET", prefix + "{t}n").string == "mt")
            await redis.close()
        }
    }
}
