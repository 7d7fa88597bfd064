import Foundation
package import Hiredis
package import RichPushCore
package import RichPushNH
import RichPushQueue

/// Apps as Redis hashes (`<prefix>:{apps}:app:<id>`: name, created, updated, version, and per
/// platform the sealed credentials and their shown summary), with the set of ids. Credentials are
/// sealed with the key ring's current key before they leave the process; the summaries are not
/// secret, so listing apps needs no key.
package struct RedisAppStore: AppStore {
    package let redis: any RedisClient
    package let keys: AppKeys
    /// Nil: this process may list apps but not set or read credentials.
    let ring: KeyRing?

    package init(redis: any RedisClient, keys: AppKeys, ring: KeyRing?) {
        self.redis = redis
        self.keys = keys
        self.ring = ring
    }

    package func create(id: AppID, name: String, credentials: AppCredentials) async throws -> AppSummary {
        try await create(id: id, change: AppChange(name: name, set: credentials))
    }

    package func create(id: AppID, change: AppChange) async throws -> AppSummary {
        guard id != .default else { throw AppError.exists(id) }
        try await write(id: id, mode: .create, change: change)
        guard let summary = try await summary(id: id) else { throw AppError.notFound(id) }
        return summary
    }

    package func update(id: AppID, change: AppChange) async throws -> AppSummary {
        try await write(id: id, mode: id == .default ? .upsert : .update, change: change)
        guard let summary = try await summary(id: id) else { throw AppError.notFound(id) }
        return summary
    }

    package func remove(id: AppID) async throws -> Bool {
        guard id != .default else { throw AppError.cannotRemoveDefault }
        return try await redis.run(Self.removeScript, RemoveCall(app: keys.app(id), all: keys.all, id: id.rawValue, channel: keys.changes))
            .int == 1
    }

    package func list() async throws -> [AppSummary] {
        let ids = (try await redis.send("SMEMBERS", keys.all).array ?? []).compactMap { $0.string.flatMap { try? AppID($0) } }
        let others = ids.filter { $0 != .default }.sorted()
        let all = [AppID.default] + others
        let replies = try await redis.sendAll(all.map { RedisCommand("HGETALL", keys.app($0)) })
        return zip(all, replies).compactMap { id, reply in
            Self.summary(id: id, fields: Self.fields(reply)) ?? (id == .default ? .implicitDefault : nil)
        }
    }

    package func summary(id: AppID) async throws -> AppSummary? {
        let fields = Self.fields(try await redis.send("HGETALL", keys.app(id)))
        return Self.summary(id: id, fields: fields) ?? (id == .default ? .implicitDefault : nil)
    }

    package func credentials(id: AppID) async throws -> (version: Int, credentials: AppCredentials)? {
        let fields = Self.fields(try await redis.send("HGETALL", keys.app(id)))
        guard let version = fields["version"].flatMap(Int.init) else { return id == .default ? (0, AppCredentials()) : nil }
        var credentials = AppCredentials()
        let decoder = JSONDecoder()
        func open<T: Decodable>(_ platform: AppPlatform, as type: T.Type) throws -> T? {
            guard let sealed = fields[platform.rawValue] else { return nil }
            let bytes = try CredentialSealer.open(sealed, app: id, field: platform.rawValue, ring: ring)
            do {
                return try decoder.decode(T.self, from: Data(bytes))
            } catch {
                throw AppError.unreadable(app: id, field: platform.rawValue)
            }
        }
        credentials.apns = try open(.apns, as: APNSCredential.self)
        credentials.fcm = try open(.fcm, as: FCMCredential.self)
        credentials.webPush = try open(.webPush, as: WebPushCredential.self)
        return (version, credentials)
    }

    /// The field of the app's hash that holds its sealed Notification Hubs rules.
    static let nhField = "nh"

    /// The app's Notification Hubs rules, opened (empty when it has none), and the app's version;
    /// nil for no app.
    package func nhRules(id: AppID) async throws -> (version: Int, rules: [NHAccessRule])? {
        let fields = try await redis.send("HMGET", keys.app(id), "version", Self.nhField).array ?? []
        guard let version = fields.first?.string.flatMap(Int.init) else { return id == .default ? (0, []) : nil }
        guard let sealed = fields.dropFirst().first?.string else { return (version, []) }
        let bytes = try CredentialSealer.open(sealed, app: id, field: Self.nhField, ring: ring)
        do {
            return (version, try JSONDecoder().decode([NHAccessRule].self, from: Data(bytes)))
        } catch {
            throw AppError.unreadable(app: id, field: Self.nhField)
        }
    }

    /// The app's version alone (0 for the default app before anything was stored), nil for no app:
    /// one HGET, for a worker checking what it cached.
    package func version(id: AppID) async throws -> Int? {
        if let version = try await redis.send("HGET", keys.app(id), "version").int { return version }
        return id == .default ? 0 : nil
    }

    private func write(id: AppID, mode: WriteMode, change: AppChange) async throws {
        var set: [String: String] = [:]
        if let name = change.name { set["name"] = name }
        let encoder = JSONEncoder()
        func seal(_ platform: AppPlatform, _ value: (some Encodable)?, summary: [String: String]?) throws {
            guard let value, let summary else { return }
            guard let ring else { throw AppError.noKeyEncryptionKey }
            set[platform.rawValue] = try CredentialSealer.seal(
                Array(try encoder.encode(value)), app: id, field: platform.rawValue, with: ring.current)
            set[platform.rawValue + ":summary"] = String(decoding: try encoder.encode(summary), as: UTF8.self)
        }
        try seal(.apns, change.set.apns, summary: change.set.apns?.summary)
        try seal(.fcm, change.set.fcm, summary: change.set.fcm?.summary)
        try seal(.webPush, change.set.webPush, summary: change.set.webPush?.summary)
        if let limits = change.limits {
            if let problem = limits.problem { throw AppError.invalid(field: "limits", problem) }
            set["limits"] = String(decoding: try encoder.encode(limits), as: UTF8.self)
        }
        if let scheduling = change.scheduling {
            if let problem = scheduling.problem { throw AppError.invalid(field: "scheduling", problem) }
            set["scheduling"] = String(decoding: try encoder.encode(scheduling), as: UTF8.self)
        }
        var remove = change.remove.sorted().flatMap { [$0.rawValue, $0.rawValue + ":summary"] }
        switch change.paused {
        case true?: set["paused"] = "1"
        case false?: remove.append("paused")
        case nil: break
        }
        switch change.defaultLocale {
        case .some(.some(let locale)): set["locale"] = locale.identifier
        case .some(.none): remove.append("locale")
        case .none: break
        }
        switch change.nhRules {
        case .some(.some(let rules)):
            if let problem = NHAccessRule.problem(with: rules) { throw AppError.invalid(field: "nhRules", problem) }
            guard let ring else { throw AppError.noKeyEncryptionKey }
            set[Self.nhField] = try CredentialSealer.seal(
                Array(try encoder.encode(rules)), app: id, field: Self.nhField, with: ring.current)
            let shown = Dictionary(uniqueKeysWithValues: rules.map { ($0.name, $0.rights.map(\.rawValue).sorted()) })
            set[Self.nhField + ":summary"] = String(decoding: try encoder.encode(shown), as: UTF8.self)
        case .some(.none): remove += [Self.nhField, Self.nhField + ":summary"]
        case .none: break
        }
        switch change.defaultDelivery {
        case .some(.some(let mode)): set["delivery"] = mode.rawValue
        case .some(.none): remove.append("delivery")
        case .none: break
        }
        let body: [String: Any] = [
            "name": change.name ?? (id == .default ? AppSummary.implicitDefault.name : id.rawValue), "set": set, "remove": remove,
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let result = try await redis.run(
            Self.writeScript,
            WriteCall(
                app: keys.app(id), all: keys.all, id: id.rawValue, channel: keys.changes, now: now, mode: mode.rawValue,
                change: json)
        ).int
        switch result {
        case -1: throw AppError.notFound(id)
        case -2: throw AppError.exists(id)
        default: break
        }
    }

    static func fields(_ reply: RedisValue) -> [String: String] {
        let items = (reply.array ?? []).map { $0.string ?? "" }
        var fields: [String: String] = [:]
        var index = 0
        while index + 1 < items.count {
            fields[items[index]] = items[index + 1]
            index += 2
        }
        return fields
    }

    static func summary(id: AppID, fields: [String: String]) -> AppSummary? {
        guard let version = fields["version"].flatMap(Int.init) else { return nil }
        var credentials: [AppPlatform: [String: String]] = [:]
        for platform in AppPlatform.allCases {
            if let text = fields[platform.rawValue + ":summary"],
                let shown = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
            {
                credentials[platform] = shown
            }
        }
        let limits = fields["limits"].flatMap { try? JSONDecoder().decode(AppLimits.self, from: Data($0.utf8)) } ?? .none
        let scheduling = fields["scheduling"].flatMap { try? JSONDecoder().decode(AppShare.self, from: Data($0.utf8)) } ?? AppShare()
        return AppSummary(
            id: id, name: fields["name"] ?? id.rawValue, createdAt: fields["created"].flatMap(Int64.init) ?? 0,
            updatedAt: fields["updated"].flatMap(Int64.init) ?? 0, version: version, credentials: credentials, limits: limits,
            defaultLocale: fields["locale"], defaultDelivery: fields["delivery"].flatMap(PushRenderer.Mode.init), scheduling: scheduling,
            paused: fields["paused"] == "1",
            nhRules: fields[nhField + ":summary"].flatMap {
                try? JSONDecoder().decode([String: [String]].self, from: Data($0.utf8))
            } ?? [:])
    }
}
