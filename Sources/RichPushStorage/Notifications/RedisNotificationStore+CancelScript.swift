import Hiredis
import RichPushCore

/// The Lua of a cancel (``RedisNotificationStore/cancel(id:)``); the partition's hash tag on
/// every key, as in `+Scripts`.
extension RedisNotificationStore {
    /// A cancel's keys and arguments (see ``cancelScript``).
    struct CancelCall {
        let status: String, record: String, webhookWants: String, webhookOutbox: String
        let id: Int, now: Int64
    }

    /// Cancels a notification none of whose pushes went out (`failed` too: a replay of its dead
    /// letter then sends nothing), or a split fan-out whose planned pushes have not all ended (its
    /// remaining batches then send nothing): "ok"; else its (derived) state (nil: none).
    static let cancelScript = LuaScript<CancelCall, Never>(
        [
            .key("status", \.status), .key("record", \.record), .key("webhookWants", \.webhookWants),
            .key("webhookOutbox", \.webhookOutbox),
            .argument("id", \.id), .argument("now", \.now),
        ], constants: NotificationLua.constants,
        using: [
            NotificationLua.webhookFunctions, NotificationLua.statusFieldsFunction, NotificationLua.stateRankFunction,
            NotificationLua.derivedStateFunction,
        ],
        body: """
            local fields = statusFields(status)
            if not fields[FIELD_STATE] then return false end
            local state = derivedState(fields)
            if state == STATE_CANCELLED then return state end
            local planned = tonumber(fields[FIELD_PLANNED] or '0')
            local ended = 0
            for _, counter in ipairs({COUNTER_SENT, COUNTER_HELD, COUNTER_INVALID_TOKEN, COUNTER_FAILED}) do
              ended = ended + tonumber(fields[counter] or '0')
            end
            if state == STATE_ACCEPTED or state == STATE_SCHEDULED or state == STATE_QUEUED or state == STATE_FAILED or ended < planned then
              redis.call('HSET', status, FIELD_STATE, STATE_CANCELLED)
              if redis.call('EXISTS', webhookWants) == 1 then
                emit(webhookWants, webhookOutbox, redis.call('HGET', record, RECORD_CREATOR), id, EVENT_CANCELLED, now, {'{}'}, record)
              end
              return 'ok'
            end
            return state

            """)
}
