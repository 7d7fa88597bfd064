import RichPushAPNS
package import RichPushApps
package import RichPushCore
import RichPushFCM
import RichPushWebPush

/// Where a worker takes its app's credentials from: the app store, read at start and watched
/// while the worker runs. `--adapter` and its URL, CA and connection flags say which providers the
/// worker talks to and where; the app says as whom (APNs key, team and bundle id; FCM service
/// account). Stored credentials win over the credential flags; a platform the app has none for
/// keeps the flags'.
package struct WorkerAppCredentials: Sendable {
    package var store: RedisAppStore
    package var app: AppID
    /// How often the app's version is read besides the change announcements.
    package var checkEvery: Duration
    /// What the worker starts with.
    package var loaded: (version: Int, credentials: AppCredentials)

    package init(
        store: RedisAppStore, app: AppID = .default, checkEvery: Duration = .seconds(5), loaded: (version: Int, credentials: AppCredentials)
    ) {
        self.store = store
        self.app = app
        self.checkEvery = checkEvery
        self.loaded = loaded
    }
}

extension RichPushWorkerConfiguration {
    /// This configuration sending as `credentials` says, for the platforms this worker sends to.
    /// Throws when stored credentials no longer make a signer (they were checked when stored).
    package func applying(_ credentials: AppCredentials) throws -> RichPushWorkerConfiguration {
        var configuration = self
        if case .apns(var settings) = adapter, let apns = credentials.apns {
            settings.signer = try APNSSigningKey(pem: apns.keyPEM, keyID: apns.keyID, teamID: apns.teamID)
            settings.topic = apns.bundleID
            configuration.adapter = .apns(settings)
        }
        if var webPush, let stored = credentials.webPush, !stored.subject.isEmpty {
            webPush.vapid = try VAPIDSigner(privateKey: stored.privateKey, subject: stored.subject)
            configuration.webPush = webPush
        }
        if var fcm, let stored = credentials.fcm {
            fcm.account = try FCMServiceAccount(json: Array(stored.serviceAccountJSON.utf8))
            configuration.fcm = fcm
        }
        return configuration
    }
}

extension RichPushWorkerConfiguration {
    /// This configuration for `app`, not the default: each platform this worker sends to goes as
    /// the app's own credentials, and one the app has none for is refused with a reason naming
    /// it (never sent as the flags' credentials, which are the default app's).
    func forApp(
        _ app: AppID, credentials: AppCredentials
    ) throws -> (configuration: RichPushWorkerConfiguration, refused: [Platform: String]) {
        var refused: [Platform: String] = [:]
        func missing(_ platform: String) -> String {
            "app '\(app)' has no \(platform) credentials; set them with richpush apps set \(app) (see docs/apps.md)"
        }
        if case .apns = adapter, credentials.apns == nil { refused[.apns] = missing("APNs") }
        if fcm != nil, credentials.fcm == nil {
            refused[.fcm] = missing("FCM")
            refused[.gcm] = missing("FCM")
        }
        if webPush != nil, credentials.webPush.map({ $0.subject.isEmpty }) ?? true {
            refused[.webpush] = missing("Web Push (a VAPID subject)")
        }
        return (try applying(credentials), refused)
    }
}
