/// Which of Apple's two push services an iOS device's token belongs to. A token is valid in one
/// only: an app built for development gets a `sandbox` token (api.sandbox.push.apple.com); App
/// Store, TestFlight and ad-hoc builds get a `production` one (api.push.apple.com). Sent to the
/// other service, Apple answers 400 `BadDeviceToken`.
package enum APNSEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case production, sandbox
}
