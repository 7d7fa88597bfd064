import Hiredis
import RichPushCore

/// A notification's status as Redis keeps it, in its record's hash (``StorageKeys/status(_:)``):
/// the state stored and the counters.
struct StoredStatus {
    /// The state stored (none: no notification, or its record expired).
    var state: DeliveryState?
    var counts: [DeliveryCounter: Int] = [:]

    /// From the record's fields (an HMGET reply, by ``fields(_:of:)``).
    init(record: [String: RedisValue]) {
        state = record[StatusField.state.rawValue]?.string.flatMap(DeliveryState.init(rawValue:))
        for counter in DeliveryCounter.allCases {
            let count = record[counter.rawValue]?.int ?? 0
            if count != 0 { counts[counter] = count }
        }
    }

    /// The state a reader sees: ``DeliveryState/derived(stored:counts:)``.
    var derived: DeliveryState { DeliveryState.derived(stored: state) { counts[$0] ?? 0 } }

    /// The fields HMGET reads for ``derived`` (the state, the counters that imply later ones).
    static let derivingFields = [StatusField.state.rawValue] + DeliveryState.impliedByCounters.flatMap(\.counters).map(\.rawValue)
    /// The fields HMGET reads for the whole status: the state and every counter (not the
    /// record's own fields, which share the hash).
    static let allFields = [StatusField.state.rawValue] + DeliveryCounter.allCases.map(\.rawValue)

    /// An HMGET reply for `names` as a dictionary (fields with no value left out).
    static func fields(_ names: [String], of reply: RedisValue) -> [String: RedisValue] {
        var fields: [String: RedisValue] = [:]
        for (name, value) in zip(names, reply.array ?? []) where value.string != nil { fields[name] = value }
        return fields
    }
}
