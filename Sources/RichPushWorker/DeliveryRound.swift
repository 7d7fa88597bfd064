import Metrics
import RichPushCore

/// What one delivery batch has learned so far, handed from step to step of
/// ``RichPushJobHandler/deliver(_:results:)``: the outcomes to record per notification, and per
/// job (its place in the batch's work) what it waits for and what failed.
struct DeliveryRound {
    let work: [RichPushJobHandler.Work]
    /// Who holds the round's leases and device claims.
    let owner = UInt64.random(in: 1...UInt64.max).description
    /// The devices this round claimed (``DeviceBackOffs``): released when it records.
    var claimed: [String] = []
    /// Per notification: the device entries and counters to record.
    var outcomes: [Int: [DeliveryResult]] = [:]
    /// Per job: how long another worker's lease on one of its pushes still runs.
    var leasedByOthers: [Int: Duration] = [:]
    /// Pushes whose token a provider declared dead since their device registered.
    var goneBefore: [PlannedPush] = []
    /// Per notification and installation: the attempts each failed push has spent, its own.
    var attempts: [Int: [String: Int]] = [:]
    /// Pushes that failed and may be retried; pushes deferred (not sent, nothing counted).
    var retryable: [PlannedPush] = []
    var deferred: [PlannedPush] = []
    /// Per job: the longest wait a provider asked for (Retry-After, a quota's hold).
    var waits: [Int: Duration] = [:]
    /// Devices whose token the provider answered is dead.
    var invalid: [Installation] = []
    /// Per reason code: the pushes the platforms refused or never answered (the console's failed/s by reason).
    var failures: [String: Int] = [:]
    /// Per adapter (the route of the device's platform) and outcome.
    var tally: [PushMetrics.Series: Int] = [:]
    /// Per job: the pushes its platform accepted (sent or held), for the app's sent total.
    var acceptedPerJob: [Int: Int] = [:]
    /// Devices a provider asked to be left alone, until when (ms): for the fleet.
    var backOffs: [String: Int64] = [:]
    /// By installation: the `auto` estimates of devices whose silent push went out, to store.
    var estimates: [String: DeviceEstimate] = [:]

    init(work: [RichPushJobHandler.Work]) {
        self.work = work
    }

    mutating func record(_ result: DeliveryResult, of plan: PlannedPush) {
        outcomes[plan.key.notification, default: []].append(result)
    }
}
