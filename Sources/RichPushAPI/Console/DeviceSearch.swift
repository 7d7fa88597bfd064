import RichPushCore
import RichPushQueue
import RichPushStorage

/// Finds an app's installations by id, owner, tag, platform and push token prefix: it scans the
/// tag's set (the owner's is the tag `username:<owner>` every registration carries) or the set of
/// all installations, ``batch`` ids per SSCAN and their records in one pipelined round trip per
/// batch, until a page of about ``page`` (the matches of whole batches) or ``scanLimit`` ids,
/// with the set's cursor to go on. There is no index by platform or token: those filter the scan.
struct DeviceSearch: Sendable {
    static let page = 50
    static let batch = 200
    static let scanLimit = 10_000
    /// How many of the app's newest notification ids a device's page looks through for its pushes.
    static let recentIDs = 2_000

    struct Filter: Sendable {
        var app: AppID
        var id: String?
        var owner: String?
        var tag: String?
        var platform: Platform?
        var handlePrefix: String?
        /// The set's SSCAN cursor from the previous page.
        var cursor = 0

        static let maxIDBytes = 128
        static let maxNameBytes = 64
        static let maxTagBytes = 200

        init(_ form: ConsoleForm, access: ConsoleAccess) throws {
            app = try ConsoleScope.app(form, access: access)
            for (name, limit) in [
                ("id", Self.maxIDBytes), ("user", Self.maxNameBytes), ("tag", Self.maxTagBytes), ("handle", ConsoleForm.maxValueBytes),
            ] {
                guard let value = form[name] else { continue }
                guard value.utf8.count <= limit else { throw Self.bad("\(name) is longer than \(limit) bytes") }
                switch name {
                case "id": id = value
                case "user": owner = value
                case "tag": tag = value
                default: handlePrefix = value
                }
            }
            if let text = form["platform"] {
                guard let platform = Platform(rawValue: text.lowercased()) else {
                    throw Self.bad("platform: one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                self.platform = platform
            }
            if let text = form["cursor"] {
                guard text.utf8.count <= 20, let cursor = Int(text), cursor >= 0 else {
                    throw Self.bad("cursor: a number from the previous page")
                }
                self.cursor = cursor
            }
        }

        static func bad(_ message: String) -> APIError { APIError.badRequest(message, code: "bad_filter") }

        /// The set scanned: the tag's, else the owner's tag, else every installation (nil).
        var source: String? { tag ?? owner.map(Installation.userTag) }

        func matches(_ installation: Installation) -> Bool {
            if let owner, installation.owner != owner { return false }
            if let tag, !installation.tags.contains(tag) { return false }
            if let platform, installation.platform != platform { return false }
            if let handlePrefix, !installation.handle.hasPrefix(handlePrefix) { return false }
            return true
        }

        var queryPairs: [(String, String)] {
            [
                ("app", app.rawValue), ("user", owner ?? ""), ("tag", tag ?? ""), ("platform", platform?.rawValue ?? ""),
                ("handle", handlePrefix ?? ""),
            ]
        }
    }

    struct Found: Sendable {
        var installations: [Installation] = []
        var scanned = 0
        /// The next page's cursor (nil: the set was read to its end).
        var next: Int?
        var limited = false
    }

    let store: RedisInstallationStore

    func run(_ filter: Filter) async throws -> Found {
        var found = Found()
        if let id = filter.id {
            found.installations = try await store.installations(ids: [id]).filter(filter.matches)
            found.scanned = 1
            return found
        }
        var cursor = filter.cursor
        repeat {
            let page = try await store.installationIDs(tag: filter.source, cursor: cursor, count: Self.batch)
            found.scanned += page.ids.count
            found.installations += try await store.installations(ids: page.ids).filter(filter.matches)
            cursor = page.next
        } while cursor != 0 && found.installations.count < Self.page && found.scanned < Self.scanLimit
        found.limited = cursor != 0 && found.installations.count < Self.page
        found.next = cursor == 0 ? nil : cursor
        return found
    }

    /// A device's pushes among its app's newest ``recentIDs`` notification ids: there is no
    /// per-device record of pushes, so each notification's ledger is asked about it (two HGETs
    /// per id, 500 ids per round trip), newest first, up to `limit`.
    static func recentPushes(
        of installation: String, store: RedisNotificationStore, limit: Int = 20
    ) async throws
        -> (pushes: [(record: RichNotification?, id: Int, device: NotificationStatus.Device)], looked: Int)
    {
        var pushes: [(record: RichNotification?, id: Int, device: NotificationStatus.Device)] = []
        let ceiling = try await store.idCeiling()
        var before = ceiling
        while before > 1 && ceiling - before < recentIDs && pushes.count < limit {
            let ids = Array(stride(from: before - 1, through: max(1, before - NotificationSearch.batch), by: -1))
            let entries = try await store.entries(of: installation, in: ids)
            let hits = ids.filter { entries[$0] != nil }.prefix(limit - pushes.count)
            let records = Dictionary(
                try await store.notifications(ids: Array(hits)).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            pushes += hits.map { (records[$0], $0, entries[$0]!) }
            before = ids.last ?? 1
        }
        return (pushes, ceiling - before)
    }
}
