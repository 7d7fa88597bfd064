import RichPushCore

/// What the API's scripts and the ledger's share: Lua fragments put in front of a script's body,
/// the state order they advance by, and the JSON items they write (device entries, webhook items).
enum NotificationLua {
    static let stateOrder = DeliveryState.allCases.map(\.rawValue).joined(separator: ",")
    /// ``DeliveryState/impliedByCounters`` for Lua: `opened=opened;…;sent=sent,held`.
    static let impliedStates = DeliveryState.impliedByCounters.map {
        "\($0.state.rawValue)=\($0.counters.map(\.rawValue).joined(separator: ","))"
    }
    .joined(separator: ";")

    /// A webhook event's device part: `{"installation":…}`, or `{"reader":…}` for a reader with none.
    static func eventItem(installation: String?, reader: String) -> [UInt8] {
        var json = JSONWriter(capacity: 48)
        json.beginObject()
        if let installation { json.field("installation", installation) } else { json.field("reader", reader) }
        json.endObject()
        return json.bytes
    }

    /// A device's entry in the status: `{"adapterID":…,"at":…,"error":…,"locale":…,"state":…,"strategy":…,"template":…}`
    /// (a template send names the device's template and the locale chosen for it; `at` is when
    /// the outcome was recorded, ms since 1970 as a string, as the receipts' `displayedAt`,
    /// `openedAt` and the fetch's `fetchedAt` are written beside it; an `auto` send names the
    /// form chosen and why as `strategy`).
    static func deviceEntry(
        state: String, adapterID: String? = nil, at: Int64? = nil, error: String? = nil, template: String? = nil,
        locale: String? = nil, strategy: String? = nil
    ) -> [UInt8] {
        var json = JSONWriter(capacity: 80)
        json.beginObject()
        if let adapterID { json.field("adapterID", adapterID) }
        if let at { json.field("at", String(at)) }
        if let error { json.field("error", error) }
        if let locale { json.field("locale", locale) }
        json.field("state", state)
        if let strategy { json.field("strategy", strategy) }
        if let template { json.field("template", template) }
        json.endObject()
        return json.bytes
    }

    /// Lua: `entryOf(value)`: the device's entry (its JSON) in a ledger value (``LedgerMark``):
    /// `R{…}` recorded, `T{…}` tried, `F{…}` failed by a dead letter. nil for a lease (`L:…`) and
    /// for a bare mark (`R`, `T`, `F`) written before the entries moved into the ledger, whose
    /// entry is in the notification's devices hash.
    static let entryFunction = """
        local function entryOf(value)
          if value and string.byte(value, 2) == 123 then return string.sub(value, 2) end
          return nil
        end

        """

    /// Lua: `updateEntry(ledger, devices, installation, fields, create, ttl)` sets `fields` (a table)
    /// in the device's entry: in its ledger value (kept under its mark) once an outcome is
    /// recorded, else in the devices hash (a bare mark's, or a pair with none yet, written only
    /// when `create` or an entry is there already). Needs ``entryFunction``.
    static let updateEntryFunction = """
        local function updateEntry(ledger, devices, installation, fields, create, ttl)
          local value = redis.call('HGET', ledger, installation)
          local text = entryOf(value)
          local old = text or redis.call('HGET', devices, installation)
          if not old and not create then return end
          local entry = {}
          if old then
            local ok, decoded = pcall(cjson.decode, old)
            if ok and type(decoded) == 'table' then entry = decoded end
          end
          for name, field in pairs(fields) do entry[name] = field end
          if text then
            redis.call('HSET', ledger, installation, string.sub(value, 1, 1) .. cjson.encode(entry))
          else
            redis.call('HSET', devices, installation, cjson.encode(entry))
            if redis.call('TTL', devices) < 0 then redis.call('EXPIRE', devices, ttl) end
          end
        end

        """

    /// Lua: `readable(record, ledger, check, reader, from, to)`: whether the record exists and,
    /// when `check` is '1', is readable: `reader` ('' for none) created it, or the ledger has a
    /// field for one of the installations `ARGV[from…to]` (it was addressed to that device: its
    /// lease is taken before the push). One HMGET per 1,000. A missing record and one the reader
    /// may not read take the same steps, so the script's time does not tell them apart.
    static let readableFunction = """
        local function readable(record, ledger, check, reader, from, to)
          local creator = redis.call('HGET', record, RECORD_CREATOR)
          if check ~= '1' then return creator ~= false end
          local allowed = reader ~= '' and creator == reader
          if not allowed then
            for first = from, to, 1000 do
              for _, value in ipairs(redis.call('HMGET', ledger, unpack(ARGV, first, math.min(first + 999, to)))) do
                if value then allowed = true end
              end
              if allowed then break end
            end
          end
          return creator ~= false and allowed
        end

        """

    /// Lua: `statusFields(status)`: a notification's status fields (its record's hash) in a table.
    static let statusFieldsFunction = """
        local function statusFields(status)
          local fields = {}
          local flat = redis.call('HGETALL', status)
          for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
          return fields
        end

        """

    /// Lua: `stateRank(state)`: the state's place in the order of ``DeliveryState``
    /// (`STATE_ORDER`, read once per script run); 0 for none.
    static let stateRankFunction = """
        local stateRanks = nil
        local function stateRank(state)
          if not stateRanks then
            stateRanks = {}
            local i = 0
            for name in string.gmatch(STATE_ORDER, '[^,]+') do i = i + 1; stateRanks[name] = i end
          end
          return stateRanks[state] or 0
        end

        """

    /// Lua (after ``stateRankFunction``): moves the state stored in a notification's status (the
    /// record's hash) to `state`, unless it is already further; true when it moved.
    static let advanceFunction = """
        local function advance(key, state)
          local current = redis.call('HGET', key, FIELD_STATE)
          if current == false or stateRank(current) < stateRank(state) then
            redis.call('HSET', key, FIELD_STATE, state)
            return true
          end
          return false
        end

        """

    /// Lua (after ``stateRankFunction``): `derivedState(fields)`: the state a status (its fields
    /// in a table) reads as, as ``DeliveryState/derived(stored:counts:)`` does it: the stored
    /// state or the furthest its counters imply, whichever is further.
    static let derivedStateFunction = """
        local function derivedState(fields)
          local stored = fields[FIELD_STATE]
          for implied, counters in string.gmatch(STATE_IMPLIED, '(%a+)=([%a,]+)') do
            for counter in string.gmatch(counters, '%a+') do
              if tonumber(fields[counter] or '0') > 0 then
                if not stored or stateRank(stored) < stateRank(implied) then return implied end
                return stored
              end
            end
          end
          return stored
        end

        """

    /// Lua: `emit(wants, outbox, creator, id, event, now, items, record)` adds one outbox entry for
    /// the `items` (JSON objects, one per device) when a webhook wants `event` for `creator`; the
    /// entry names the record's app (`a`) when the record has one (an app other than the default).
    static let webhookFunctions = """
        local function emit(wants, outbox, creator, id, event, now, items, record)
          if not creator or #items == 0 then return end
          local w = redis.call('HMGET', wants, event .. ':' .. creator, event .. ':*')
          if tonumber(w[1] or '0') <= 0 and tonumber(w[2] or '0') <= 0 then return end
          local app = redis.call('HGET', record, RECORD_APP)
          if app then
            redis.call('XADD', outbox, '*', 'n', id, 'u', creator, 't', event, 'at', now, 'e', '[' .. table.concat(items, ',') .. ']', 'a', app)
          else
            redis.call('XADD', outbox, '*', 'n', id, 'u', creator, 't', event, 'at', now, 'e', '[' .. table.concat(items, ',') .. ']')
          end
        end

        """
}
