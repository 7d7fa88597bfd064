package import Hiredis

/// The fields of a partition's scheduler hash (``JobQueueConfiguration/schedulerKey``), spelled
/// once: Swift names them here, and the scripts get them as constants (`SCHED_VIRTUAL_TIME`,
/// `SCHED_IN_FLIGHT`, …). The per-app ones are a prefix and the app: `f:shop`.
package enum SchedulerField: String, CaseIterable {
    /// The partition's virtual time: the pass of the last app a take served.
    case virtualTime = "V"
    /// Jobs admitted and not yet moved into the stream, in all the apps' lanes.
    case waiting
    /// Per app: its pass (stride scheduling) while it is out of the ready set.
    case pass = "p:"
    /// Per app: its weight (absent: 1).
    case weight = "w:"
    /// Per app: the most of its jobs in flight at once (absent: no cap).
    case maxInFlight = "c:"
    /// Per app: its jobs in flight (taken, not yet settled).
    case inFlight = "f:"
    /// Per app: set while it is paused.
    case paused = "x:"
    /// Per app: jobs taken from its lanes.
    case taken = "t:"
    /// Per app: jobs done.
    case done = "d:"
    /// Per app: jobs sent back to retry.
    case retried = "r:"
    /// Per app: jobs dead-lettered.
    case deadLettered = "k:"
    /// Per app: pushes the platforms accepted, as the workers told them with their acks.
    case sent = "s:"

    /// The field of `app` (for the per-app fields).
    package func of(_ app: String) -> String { rawValue + app }

    /// `SCHED_<NAME>` for every field, for the scripts (each script gets the ones it uses).
    package static let constants: [LuaConstant] = allCases.map { field in
        var name = "SCHED_"
        for character in "\(field)" {
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
        return .string(name, field.rawValue)
    }
}
