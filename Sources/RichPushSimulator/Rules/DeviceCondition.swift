/// What a simulated device is doing when a push reaches it, as the platforms' delivery rules
/// tell them apart. A state a platform does not have is read as its nearest one
/// (``effective(on:)``): an iPhone in `doze` is in the background, an Android phone in
/// `low-power` dozes.
package enum DeviceCondition: String, Sendable, Hashable, CaseIterable, Codable {
    /// The app is on screen.
    case foreground
    /// The app runs in the background.
    case background
    /// The app is suspended in memory: for push delivery the same as in the background.
    case suspended
    /// The user swiped the app away (iOS) or force-stopped it (Android).
    case forceQuit = "force-quit"
    /// The device is off the network for a while (``DeviceRules/offlineFor``), then in the
    /// background.
    case offline
    /// Android's Doze: the device idles and wakes in maintenance windows.
    case doze
    /// iOS's Low Power Mode: Background App Refresh is off.
    case lowPower = "low-power"

    /// The condition the rules of `platform` apply.
    package func effective(on platform: PushPlatformRules) -> DeviceCondition {
        switch (self, platform) {
        case (.suspended, _): .background
        case (.doze, .ios), (.doze, .web), (.lowPower, .web): .background
        case (.lowPower, .android): .doze
        default: self
        }
    }
}

/// Whose rules a device follows.
package enum PushPlatformRules: String, Sendable, Hashable, CaseIterable {
    case ios, android, web
}
