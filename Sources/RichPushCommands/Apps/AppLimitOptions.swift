import ArgumentParser
import RichPushCore

/// `--limit-…`: an app's limits, all its users together (0: no limit; not given: unchanged).
struct AppLimitOptions: ParsableArguments {
    @Option(help: "Notifications the app's users may create per minute, together (0: no limit).") var limitPerMinute: Int?
    @Option(help: "Devices one notification may address (0: no limit).") var limitAudience: Int?
    @Option(help: "Payload bytes of the app's notifications held within the retention (0: no limit).") var limitPayloadBytes: Int?

    func validate() throws {
        for (flag, value) in [
            ("--limit-per-minute", limitPerMinute), ("--limit-audience", limitAudience), ("--limit-payload-bytes", limitPayloadBytes),
        ] {
            if let value, !(0...AppLimits.maximum).contains(value) {
                throw ValidationError("\(flag) is 0 (no limit) to \(AppLimits.maximum)")
            }
        }
    }

    /// `current` with the limits given; nil when none is given.
    func limits(over current: AppLimits) -> AppLimits? {
        guard limitPerMinute != nil || limitAudience != nil || limitPayloadBytes != nil else { return nil }
        return current.replacing(notificationsPerMinute: limitPerMinute, audience: limitAudience, payloadBytes: limitPayloadBytes)
    }
}
