import Hiredis
import RichPushCore
import RichPushQueue

/// The Lua of a notification's life in ``RedisNotificationStore``: its create, the device's
/// fetch and its receipts (a cancel's is in `+CancelScript`). Each write that belongs together is
/// one script, and every key it touches carries the partition's hash tag (one Redis Cluster
/// slot). Each script is a ``LuaScript`` that names its keys and arguments; its call is the value
/// beside it.
extension RedisNotificationStore {
    /// One notification of a create call (see ``createScript``).
    struct CreateItem {
        let payloadKey: String, record: String, index: String, delayed: String
        let ttl: Int, id: Int, payload: [UInt8]
        /// The send time in ms (0: now).
        let sendAt: Int64
        let quota: QuotaCharge?
        let idempotency: IdempotencyCompletion?
        /// The record's field/value items (the status's stored state among them).
        let fields: [any RedisArgument]
        /// The job, admitted into the queue with the record.
        let job: JobAdmission
    }

    /// The idempotency key a create completes, and how long it is kept.
    struct IdempotencyCompletion {
        let key: String, ttl: Int
    }

    /// Creates one or more notifications, each all or nothing, in one call (a batch's share of a
    /// partition: all its keys carry the partition's hash tag). Per notification, in order: 1
    /// created; 0 nothing written, the record exists (an id is never reused over an older
    /// notification); or the quota's `{code, seconds}` and nothing written when it is spent: the
    /// charge and the create in one step on one Redis (on a cluster the quota keys are in another
    /// slot, and the quota is charged first, apart). One call for many amortizes the script call
    /// itself, which costs more than the writes.
    static let createScript = LuaScript<[CreateItem], CreateItem>(
        [], items: { $0 },
        each: [
            .key("payloadKey", \.payloadKey), .key("record", \.record), .key("index", \.index),
            .key("delayed", \.delayed),
        ] + JobAdmission.slots { $0.job } + [
            .argument("ttl", \.ttl), .argument("id", \.id), .argument("payload", \.payload), .number("sendAt", \.sendAt),
            .section("quota", \.quota, quotaSlots),
            .section("idempotency", \.idempotency, [.key("idempotencyKey", \.key), .argument("idempotencyTTL", \.ttl)]),
            .list("fields", { $0.fields }), .list("job", { $0.job.fields }),
        ], constants: NotificationLua.constants + SchedulerField.constants, using: [quotaFunction, JobAdmission.luaFunction],
        before: """
            local stored, indexes, out = {}, {}, {}

            """,
        eachItem: """
            if redis.call('EXISTS', record) == 1 then
              out[#out + 1] = 0
              break
            end
            if quota then
              local refused = charge(quotaBucket, quotaBytes, quotaLedger, quotaNow, quotaPerMinute, quotaBurst, quotaLiveBytes, quotaSize, quotaExpiry, quotaRetention, quotaMember)
              if refused then
                out[#out + 1] = refused
                break
              end
            end
            -- A payload sent again in the same call (the same content, hence key) is written once, and
            -- each creator's index gets its expiry once (the call's creates all expire then).
            if not stored[payloadKey] then
              redis.call('SET', payloadKey, payload, 'EX', ttl)
              stored[payloadKey] = true
            end
            redis.call('HSET', record, unpack(ARGV, fieldsFrom, fieldsTo))
            redis.call('EXPIRE', record, ttl)
            redis.call('ZADD', index, id, id)
            if not indexes[index] then
              redis.call('EXPIRE', index, ttl)
              indexes[index] = true
            end
            -- The creator's index drops its oldest entries whose records expired: on one create in 8
            -- (by id), up to 16, so it shrinks faster than it grows once records expire, and the other
            -- creates pay nothing for it (the record keys share the partition's hash tag, hence the
            -- slot, with the index).
            if tonumber(id) % 8 == 0 then
              local base = string.sub(record, 1, #record - #id)
              local gone = {}
              for _, oldest in ipairs(redis.call('ZRANGE', index, 0, 15)) do
                if redis.call('EXISTS', base .. oldest) == 1 then break end
                gone[#gone + 1] = oldest
              end
              if #gone > 0 then redis.call('ZREM', index, unpack(gone)) end
            end
            if idempotency then
              redis.call('HSET', idempotencyKey, 'state', 'done', 'id', id)
              redis.call('EXPIRE', idempotencyKey, idempotencyTTL)
            end
            if sendAt > 0 then
              -- As a due retry is kept: the job's fields packed, scored by when it is due.
              redis.call('ZADD', delayed, sendAt, cmsgpack.pack({unpack(ARGV, jobFrom, jobTo)}))
            else
              admit(fair, stream, ready, sched, bell, waitPrefix, {unpack(ARGV, jobFrom, jobTo)})
            end
            out[#out + 1] = 1

            """,
        after: """
            admitted()
            return out

            """)

    /// A read check's keys and arguments (see ``readableScript``).
    struct ReadableCall {
        let record: String, ledger: String
        /// The reader who may have created it ('' for none), installations of which one may
        /// have been addressed.
        let reader: String, addressees: [any RedisArgument]
    }

    /// 1 when the record exists and is readable as the call says, else 0: the check that
    /// ``fetchScript`` and ``receiptScript`` make before they record, on its own.
    static let readableScript = LuaScript<ReadableCall, Never>(
        [.key("record", \.record), .key("ledger", \.ledger), .argument("reader", \.reader), .list("addressees", { $0.addressees })],
        constants: NotificationLua.constants, using: [NotificationLua.readableFunction],
        body: """
            return readable(record, ledger, '1', reader, addresseesFrom, addresseesTo) and 1 or 0

            """)

    /// A fetch's keys and arguments (see ``fetchScript``).
    struct FetchCall {
        let fetchedBy: String, status: String, record: String, webhookWants: String, webhookOutbox: String, ledger: String, devices: String
        let fetcher: String, ttl: Int, counter: String, id: Int, now: Int64, item: [UInt8]
        /// The read check (see ``NotificationLua/readableFunction``): '1' to make it, the reader
        /// who may have created it ('' for none), installations of which one may have been addressed.
        let check: String, reader: String, addressees: [any RedisArgument]
    }

    /// 1 recorded, 0 unreadable or no record (a ledger may outlive its record; both are looked
    /// at either way, so a missing id costs what someone else's does).
    static let fetchScript = LuaScript<FetchCall, Never>(
        [
            .key("fetchedBy", \.fetchedBy), .key("status", \.status), .key("record", \.record), .key("webhookWants", \.webhookWants),
            .key("webhookOutbox", \.webhookOutbox), .key("ledger", \.ledger), .key("devices", \.devices),
            .argument("fetcher", \.fetcher), .argument("ttl", \.ttl), .argument("counter", \.counter),
            .argument("id", \.id), .argument("now", \.now), .argument("item", \.item), .argument("check", \.check),
            .argument("reader", \.reader), .list("addressees", { $0.addressees }),
        ], constants: NotificationLua.constants,
        using: [
            NotificationLua.webhookFunctions, NotificationLua.readableFunction,
            NotificationLua.entryFunction, NotificationLua.updateEntryFunction,
        ],
        body: """
            if not readable(record, ledger, check, reader, addresseesFrom, addresseesTo) then return 0 end
            if redis.call('SADD', fetchedBy, fetcher) == 1 then
              redis.call('EXPIRE', fetchedBy, ttl)
              -- A device's first fetch: its time in the device's entry, when it has one (the console's timeline).
              if string.sub(fetcher, 1, 2) == 'i:' then
                updateEntry(ledger, devices, string.sub(fetcher, 3), {fetchedAt = now}, false, ttl)
              end
              redis.call('HINCRBY', status, counter, 1)
              if redis.call('EXISTS', webhookWants) == 1 then
                emit(webhookWants, webhookOutbox, redis.call('HGET', record, RECORD_CREATOR), id, EVENT_FETCHED, now, {item}, record)
              end
            end
            return 1

            """)

    /// A receipt's keys and arguments (see ``receiptScript``).
    struct ReceiptCall {
        let status: String, devices: String, receipts: String, record: String, webhookWants: String, webhookOutbox: String, ledger: String
        /// The counter (the receipt's kind: it moves the derived state on), the installation ('' for none).
        let counter: String, installation: String
        let ttl: Int
        /// What makes the receipt count once (kind and installation or reader).
        let identity: String
        let id: Int, now: Int64
        /// The webhook event's device item.
        let item: [UInt8]
        /// The read check, as in ``FetchCall``.
        let check: String, reader: String, addressees: [any RedisArgument]
    }

    /// 1 counted, 0 counted before, -1 unreadable or no record (both looked at either way, as
    /// in ``fetchScript``).
    static let receiptScript = LuaScript<ReceiptCall, Never>(
        [
            .key("status", \.status), .key("devices", \.devices), .key("receipts", \.receipts), .key("record", \.record),
            .key("webhookWants", \.webhookWants), .key("webhookOutbox", \.webhookOutbox), .key("ledger", \.ledger),
            .argument("counter", \.counter), .argument("installation", \.installation), .argument("ttl", \.ttl),
            .argument("identity", \.identity), .argument("id", \.id), .argument("now", \.now), .argument("item", \.item),
            .argument("check", \.check), .argument("reader", \.reader), .list("addressees", { $0.addressees }),
        ], constants: NotificationLua.constants,
        using: [
            NotificationLua.webhookFunctions, NotificationLua.readableFunction, NotificationLua.entryFunction,
            NotificationLua.updateEntryFunction,
        ],
        body: """
            if not readable(record, ledger, check, reader, addresseesFrom, addresseesTo) then return -1 end
            if redis.call('SADD', receipts, identity) == 0 then return 0 end
            if redis.call('EXISTS', webhookWants) == 1 then
              emit(webhookWants, webhookOutbox, redis.call('HGET', record, RECORD_CREATOR), id, counter, now, {item}, record)
            end
            if redis.call('TTL', receipts) < 0 then redis.call('EXPIRE', receipts, ttl) end
            redis.call('HINCRBY', status, counter, 1)
            if installation ~= '' then
              -- The device's state and the receipt's time (`displayedAt`, `openedAt`: the console's timeline).
              updateEntry(ledger, devices, installation, {state = counter, [counter .. 'At'] = now}, true, ttl)
            end
            return 1

            """)
}
