import Hiredis
import RichPushCore

extension RedisNotificationStore {
    /// A receipt's keys and arguments (see ``receiptScript``).
    struct ReceiptCall {
        let status: String, devices: String, receipts: String, record: String, webhookWants: String, webhookOutbox: String, ledger: String
        /// The counter (the receipt's kind), the installation ('' for none), the state it moves to.
        let counter: String, installation: String, state: String
        let ttl: Int
        /// What makes the receipt count once (kind and installation or reader).
        let identity: String
        let id: Int, now: Int64
        /// The webhook event's device item.
        let item: [UInt8]
        /// The installations of which one must have been addressed (none: no check).
        let addressees: [any RedisArgument]
    }

    /// 1 counted, 0 counted before, -1 not addressed or no record (both looked at either way, as
    /// in ``fetchScript``).
    static let receiptScript = LuaScript<ReceiptCall, Never>([
        .key("status", \.status), .key("devices", \.devices), .key("receipts", \.receipts), .key("record", \.record),
        .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .key("ledger", \.ledger),
        .argument("counter", \.counter), .argument("installation", \.installation), .argument("state", \.state), .argument("ttl", \.ttl),
        .argument("identity", \.identity), .argument("id", \.id), .argument("now", \.now), .argument("item", \.item),
        .list("addressees", { $0.addressees }),
    ], constants: NotificationLua.constants,
    using: [NotificationLua.advanceFunction, NotificationLua.webhookFunctions, NotificationLua.addressedFunction, NotificationLua.entryFunction], body: """
    local exists = redis.call('EXISTS', record) == 1
    if not addressed(ledger, addresseesFrom, addresseesTo) or not exists then return -1 end
    if redis.call('SADD', receipts, identity) == 0 then return 0 end
    if redis.call('EXISTS', webhookWants) == 1 then
      emit(webhookWants, webhookOutbox, redis.call('HGET', record, 'creator'), id, counter, now, {item}, record)
    end
    if redis.call('TTL', receipts) < 0 then redis.call('EXPIRE', receipts, ttl) end
    redis.call('HINCRBY', status, counter, 1)
    if installation ~= '' then
      -- The device's entry: in its ledger value (kept under its mark) once an outcome is
      -- recorded, else in the devices hash (a bare mark's, or a pair with none yet).
      local value = redis.call('HGET', ledger, installation)
      local text = entryOf(value)
      do
        local entry = {}
        local old = text or redis.call('HGET', devices, installation)
        if old then
          local ok, decoded = pcall(cjson.decode, old)
          if ok and type(decoded) == 'table' then entry = decoded end
        end
        entry['state'] = counter
        if text then
          redis.call('HSET', ledger, installation, string.sub(value, 1, 1) .. cjson.encode(entry))
        else
          redis.call('HSET', devices, installation, cjson.encode(entry))
          if redis.call('TTL', devices) < 0 then redis.call('EXPIRE', devices, ttl) end
        end
      end
    end
    advance(status, state)
    return 1

    """)
}
