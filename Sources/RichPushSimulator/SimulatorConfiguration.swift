import Crypto
package import Foundation
package import Hiredis
import RichPushAdapters
package import RichPushCore

/// How the simulated devices behave, as the tutorial's iOS app does.
package struct SimulatorConfiguration: Sendable {
    package enum AppState: String, Sendable, CaseIterable {
        /// In the foreground: the local notification shows as an in-app alert with OK and More.
        case active
        /// In the background: the system banner; tapping it or More opens the app.
        case background
        /// Every other device active.
        case mixed
    }

    package enum Tap: String, Sendable, CaseIterable {
        /// The user presses More (or taps the banner): the image view opens.
        case more
        /// The user presses OK: dismissed.
        case ok
        /// The user does nothing.
        case none
    }

    package var apiBaseURL: URL
    package var user: String
    package var password: String
    package var devices: Int
    package var appState: AppState
    package var tap: Tap
    /// Delay of the local notification after the fetch (the tutorial's 5 s; 0 in load tests).
    package var fireDelay: Duration
    /// Where the image view writes payloads; nil keeps them in memory only.
    package var outDirectory: URL?
    /// The Redis the simulated hub publishes on, and its key prefix.
    package var redis: RedisConfiguration
    /// On Redis Cluster: the cluster (the device channels are sharded over its masters); `redis`
    /// is then unused.
    package var cluster: RedisClusterClient?
    package var hubPrefix: String
    /// Push handles are `<handlePrefix>-<n>`; the same prefix again re-registers the same devices.
    package var handlePrefix: String
    /// Report displayed/opened back to the API.
    package var sendReceipts: Bool
    /// Do the background fetch (the app's behaviour); false only records that the push arrived
    /// (load tests of the silent push alone).
    package var fetch: Bool = true
    /// How long a failed background fetch (no connection, 5xx) is retried with back-off before
    /// the device gives up: iOS gives a background fetch about 30 s. A 4xx is final at once.
    package var fetchBudget: Duration = .seconds(30)
    /// Where events go instead of ``DeviceSimulator/events``: called on the device's own task,
    /// concurrently. Load tests use it, as one consumer of the stream cannot keep up with tens
    /// of thousands of events per second and the stream would buffer them all.
    package var eventSink: (@Sendable (SimulatorEvent) -> Void)?
    /// Where the devices keep the collapse ids of what they show, so a restarted simulator still
    /// collapses a resend, as a phone's Notification Center does after the app was killed.
    /// nil: in memory only.
    package var stateFile: URL?
    /// Push handles as APNs device tokens (64 hex digits, derived from `<handlePrefix>-<n>`),
    /// for the APNs adapter and `richpush apns-sim`; false: `<handlePrefix>-<n>` as is.
    package var apnsTokens = false
    /// Which platforms the devices run, in turn: iOS (platform `apns`), Android (`fcm`), web
    /// (`webpush`).
    package var platforms: Devices = .apns
    /// Where web devices subscribe; required when ``platforms`` has `webpush`.
    package var webPush: WebPushService?
    /// The app shows a notification for each push it handles (the tutorial's app); false: it
    /// handles them without showing anything, as a data-sync app does, which Safari revokes and
    /// FCM deprioritizes.
    package var appShowsNotifications = true
    /// The platforms' delivery rules the devices follow (`richpush device-sim`'s default); nil:
    /// every push wakes its app at once (`--lenient`, for throughput benchmarks). With rules, a
    /// device's condition (``DeviceRules/population``) decides whether it is in the foreground,
    /// not ``appState``.
    package var rules: DeviceRules?

    /// The app the devices belong to: `shop` for a user `alice@shop` (as the API reads a user
    /// name), else the default app. Their pushes reach them on the hub under this app.
    package var app: AppID {
        guard let at = user.lastIndex(of: "@"), at != user.startIndex, let app = AppID(validating: user[user.index(after: at)...]) else {
            return .default
        }
        return app
    }

    /// Where the hub reaches device `index`'s phone: its handle under the devices' app.
    package func hubAddress(of index: Int) -> String { OfflineStore.address(handle(of: index), app: app) }

    /// The platform device `index` registers with.
    package func platform(of index: Int) -> Platform { platforms.platform(of: index) }

    /// The push handle of device `index` (a web device's is the endpoint its push service gives
    /// it; this is then only its name): for Android an FCM-shaped registration token
    /// (`<22 base64url>:APA91b<43 base64url>`, derived from `<handlePrefix>-<n>`), for iOS
    /// `<handlePrefix>-<n>` or, with ``apnsTokens``, 64 hex digits derived from it.
    package func handle(of index: Int) -> String {
        let name = "\(handlePrefix)-\(index)"
        if platform(of: index) == .fcm {
            let instance = Base64URL.encode(SHA256.hash(data: Array("instance:\(name)".utf8)).prefix(16))
            return "\(instance):APA91b" + Base64URL.encode(SHA256.hash(data: Array(name.utf8)))
        }
        guard apnsTokens else { return name }
        return Hex.encode(SHA256.hash(data: Array(name.utf8)))
    }

    package init(
        apiBaseURL: URL, user: String, password: String, devices: Int = 1, appState: AppState = .active, tap: Tap = .more,
        fireDelay: Duration = .seconds(5), outDirectory: URL? = nil, redis: RedisConfiguration, hubPrefix: String = "richpush",
        handlePrefix: String? = nil, sendReceipts: Bool = true
    ) {
        self.apiBaseURL = apiBaseURL
        self.user = user
        self.password = password
        self.devices = devices
        self.appState = appState
        self.tap = tap
        self.fireDelay = fireDelay
        self.outDirectory = outDirectory
        self.redis = redis
        self.hubPrefix = hubPrefix
        self.handlePrefix = handlePrefix ?? "sim-\(user)"
        self.sendReceipts = sendReceipts
    }
}

/// One thing a simulated device did, printed as one JSON line.
package struct SimulatorEvent: Sendable, Codable, Hashable {
    package var event: String
    package var device: Int
    package var installation: String?
    package var richId: String?
    package var richType: String?
    package var message: String?
    package var status: Int?
    package var detail: String?
    package var path: String?
    /// Microseconds from the hub's send to this event.
    package var sinceSentMicros: Int?
    /// When it happened: microseconds since 1970 (set when the event is emitted).
    package var at: Int?

    package init(
        event: String, device: Int, installation: String? = nil, richId: String? = nil, richType: String? = nil, message: String? = nil,
        status: Int? = nil, detail: String? = nil, path: String? = nil, sinceSentMicros: Int? = nil
    ) {
        self.event = event
        self.device = device
        self.installation = installation
        self.richId = richId
        self.richType = richType
        self.message = message
        self.status = status
        self.detail = detail
        self.path = path
        self.sinceSentMicros = sinceSentMicros
    }
}
