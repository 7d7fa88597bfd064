package import RichPushCore
package import RichPushNH
package import RichPushQueue

/// One app as anyone may see it: its id and name, when it changed, and what its credentials are
/// (ids and fingerprints, never a secret). `version` grows with every change, so a worker can tell
/// in one read whether what it cached is current.
package struct AppSummary: Sendable, Hashable {
    package var id: AppID
    package var name: String
    /// Milliseconds since 1970; 0 for the default app before anything was stored for it.
    package var createdAt: Int64
    package var updatedAt: Int64
    package var version: Int
    /// Per platform (`apns`, `fcm`, `webPush`): its shown fields; absent when not set.
    package var credentials: [AppPlatform: [String: String]]
    /// What the app may do, all its users together.
    package var limits: AppLimits
    /// The locale a localized property falls back to for a device whose own locale (and its
    /// language) the send does not give, before the first locale given (BCP 47; nil: none).
    package var defaultLocale: String?
    /// How its notifications reach the apps when the sender says nothing (`delivery`; nil: the
    /// workers' `--push-mode`).
    package var defaultDelivery: PushRenderer.Mode?
    /// Its share of the workers under fair scheduling: weight and cap on jobs in flight (written
    /// into the queue's partitions by whoever changes it, after it is stored here).
    package var scheduling: AppShare
    /// Its sending is paused (fair scheduling: its jobs wait in its lanes). Kept here so that a
    /// queue partition added later, or a scheduler hash that was lost, is paused again by the
    /// next worker's start, as the weight and cap are.
    package var paused: Bool
    /// Its Notification Hubs rules as shown: each rule's name and rights, never a key (empty: the
    /// app has none).
    package var nhRules: [String: [String]] = [:]

    package init(
        id: AppID, name: String, createdAt: Int64, updatedAt: Int64, version: Int, credentials: [AppPlatform: [String: String]],
        limits: AppLimits = .none, defaultLocale: String? = nil, defaultDelivery: PushRenderer.Mode? = nil,
        scheduling: AppShare = AppShare(), paused: Bool = false, nhRules: [String: [String]] = [:]
    ) {
        self.nhRules = nhRules
        self.paused = paused
        self.defaultLocale = defaultLocale
        self.defaultDelivery = defaultDelivery
        self.scheduling = scheduling
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
        self.credentials = credentials
        self.limits = limits
    }

    /// The default app as it is before anything was stored for it.
    package static let implicitDefault = AppSummary(
        id: .default, name: "Default app", createdAt: 0, updatedAt: 0, version: 0, credentials: [:])
}

/// The platforms an app holds credentials for.
package enum AppPlatform: String, Sendable, Hashable, CaseIterable, Comparable {
    case apns
    case fcm
    case webPush

    package static func < (lhs: AppPlatform, rhs: AppPlatform) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An app's credentials, opened: what a worker signs and sends with.
package struct AppCredentials: Sendable, Hashable {
    package var apns: APNSCredential?
    package var fcm: FCMCredential?
    package var webPush: WebPushCredential?

    package init(apns: APNSCredential? = nil, fcm: FCMCredential? = nil, webPush: WebPushCredential? = nil) {
        self.apns = apns
        self.fcm = fcm
        self.webPush = webPush
    }
}

/// A change to an app: a new name, credentials to set (each replaces the platform's), platforms
/// whose credentials to remove.
package struct AppChange: Sendable {
    package var name: String?
    package var set: AppCredentials
    package var remove: Set<AppPlatform>
    /// New limits (nil: unchanged).
    package var limits: AppLimits?
    /// A new default locale (nil: unchanged; `.some(nil)`: removed), normalised (``LocaleTag``).
    package var defaultLocale: LocaleTag??
    /// A new default delivery (nil: unchanged; `.some(nil)`: removed).
    package var defaultDelivery: PushRenderer.Mode??
    /// A new weight and cap (nil: unchanged), whole: the caller fills in what it keeps.
    package var scheduling: AppShare?
    /// Paused or not (nil: unchanged).
    package var paused: Bool?
    /// Its Notification Hubs rules, whole (nil: unchanged; `.some(nil)`: removed), sealed as
    /// credentials are.
    package var nhRules: [NHAccessRule]??

    package init(
        name: String? = nil, set: AppCredentials = AppCredentials(), remove: Set<AppPlatform> = [], limits: AppLimits? = nil,
        defaultLocale: LocaleTag?? = nil, defaultDelivery: PushRenderer.Mode?? = nil, scheduling: AppShare? = nil, paused: Bool? = nil,
        nhRules: [NHAccessRule]?? = nil
    ) {
        self.nhRules = nhRules
        self.paused = paused
        self.defaultLocale = defaultLocale
        self.defaultDelivery = defaultDelivery
        self.scheduling = scheduling
        self.name = name
        self.set = set
        self.remove = remove
        self.limits = limits
    }

    /// Nil when `name` is acceptable: 1 to 100 printable characters.
    package static func nameProblem(_ name: String) -> String? {
        guard (1...100).contains(name.count), name.utf8.count <= 400 else { return "a name is 1 to 100 characters" }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "a name has no control characters"
        }
        return nil
    }
}

/// Where apps and their sealed credentials live (Redis in production).
package protocol AppStore: Sendable {
    /// Creates an app; throws ``AppError/exists(_:)`` when the id is taken (`default` always is).
    func create(id: AppID, name: String, credentials: AppCredentials) async throws -> AppSummary
    /// Creates an app as `change` says (its name, credentials and limits).
    func create(id: AppID, change: AppChange) async throws -> AppSummary
    /// Every app, the default one first (it is listed even before anything was stored for it).
    func list() async throws -> [AppSummary]
    /// One app, or nil.
    func summary(id: AppID) async throws -> AppSummary?
    /// Applies a change; throws ``AppError/notFound(_:)`` for an unknown app. The default app's
    /// record is made by its first change.
    func update(id: AppID, change: AppChange) async throws -> AppSummary
    /// Removes an app; false when there was none. Throws for the default app.
    func remove(id: AppID) async throws -> Bool
    /// The app's credentials, opened with the key ring, and the version they belong to.
    func credentials(id: AppID) async throws -> (version: Int, credentials: AppCredentials)?
}
