/// The platforms' delivery rules a strict simulated device follows (docs/devices.md cites each
/// from its platform's documentation). Waits are simulated: ``timeScale`` simulated seconds pass
/// per real second, so a day of sends runs in minutes with the hourly budgets intact. The limits
/// on the app's own work (``backgroundSeconds``, ``extensionSeconds``) are real seconds: the
/// fetch runs over a real network at real speed.
package struct DeviceRules: Sendable, Hashable {
    /// iOS: background pushes an app may take per hour in the background ("don't try to send
    /// more than two or three per hour"); the bucket refills at this rate.
    package var backgroundPushesPerHour: Double = 3
    /// iOS: background pushes taken at once before the hourly rate applies.
    package var backgroundBurst: Int = 3
    /// iOS: how long a notification service extension may take to fetch and attach the media
    /// before the system shows the original alert (real seconds).
    package var extensionSeconds: Double = 30
    /// iOS: how long the app gets to finish in the background, its background fetch (real seconds).
    package var backgroundSeconds: Double = 30
    /// iOS: the largest attachment per rich type (Apple's `UNNotificationAttachment` limits:
    /// image 10 MB, audio 5 MB; a URL or text is shown as text).
    package var attachmentBytes: [String: Int] = ["img": 10_000_000, "sound": 5_000_000]
    /// Android: seconds between Doze's maintenance windows, when normal-priority messages arrive.
    package var dozeWindowSeconds: Double = 1800
    /// Android: high-priority data messages in a row that show nothing before FCM delivers the
    /// app's further ones at normal priority.
    package var deprioritizeAfter: Int = 3
    /// Web: the share of web devices that are Safari (the others Chrome), fixed per device by the seed.
    package var safariShare: Double = 0.5
    /// Safari: pushes in a row that show no notification before it revokes the subscription.
    package var safariRevokesAfter: Int = 3
    /// How long an `offline` device stays off the network (simulated seconds).
    package var offlineSeconds: Double = 600
    /// Simulated seconds per real second.
    package var timeScale: Double = 1
    /// Who is in which condition.
    package var population: DevicePopulation = .all(.foreground)
    /// Fixes each device's condition and its Doze phase.
    package var seed: UInt64 = 1

    package init() {}

    /// Checks the numbers; nil when they hold, else what is wrong.
    package var problem: String? {
        if !(backgroundPushesPerHour > 0 && backgroundPushesPerHour <= 3600) {
            return "the background budget must be above 0 and at most 3600 an hour"
        }
        if !(1...1000).contains(backgroundBurst) { return "the background burst must be from 1 to 1000" }
        if !(0...1).contains(safariShare) { return "the Safari share must be from 0 to 1" }
        if !(timeScale >= 1 && timeScale <= 100_000) { return "the time scale must be from 1 to 100000" }
        for (name, value) in [("extension time", extensionSeconds), ("background time", backgroundSeconds)]
        where !(value > 0 && value <= 300) {
            return "the \(name) must be above 0 and at most 300 seconds"
        }
        for (name, value) in [("Doze window", dozeWindowSeconds), ("offline time", offlineSeconds)] where !(value > 0 && value <= 7 * 86400)
        {
            return "the \(name) must be above 0 and at most 7 days (in simulated seconds)"
        }
        return nil
    }

    /// `seconds` of real time.
    static func seconds(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded(.up))) }

    /// Real time for `seconds` of simulated time.
    package func real(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds / timeScale * 1000).rounded(.up))) }
}
