import Foundation
package import Hiredis
package import RichPushCore

/// Installations as Redis hashes, with one set per tag and one per push handle.
package struct RedisInstallationStore: InstallationStore {
    let redis: any RedisClient
    let keys: StorageKeys
    /// Owners by installation id, briefly: every background fetch and receipt of a device asks.
    private let owners: ContentCache<String, String>

    /// `ownerTTL`: how long an installation's owner is remembered in this process. Its removal
    /// here forgets it at once; a removal elsewhere is seen after at most this long.
    package init(redis: any RedisClient, keys: StorageKeys, ownerTTL: Duration = .seconds(30)) {
        self.redis = redis
        self.keys = keys
        self.owners = ContentCache(budget: 200_000, ttl: ownerTTL)
    }

    package func owner(of id: String) async throws -> String? {
        if let cached = owners.value(for: id) { return cached }
        guard let owner = try await redis.send("HGET", keys.installation(id), "owner").string else { return nil }
        owners.insert(owner, for: id, cost: 1)
        return owner
    }

    package func registrationID(forHandle handle: String?, owner: String) async throws -> String {
        if let handle, !handle.isEmpty {
            let existing = try await installationIDs(handles: [handle])
            let mine = try await installations(ids: existing).filter { $0.owner == owner }
            if let keep = mine.first {
                // The seed keeps one registration per handle and deletes the others.
                for extra in mine.dropFirst() { _ = try await delete(id: extra.id, owner: owner) }
                return keep.id
            }
        }
        var random = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(random.next() as UInt32, radix: 16).leftPadded(to: 8) }.joined()
    }

    package func save(_ installation: Installation, limits: RegistrationLimits) async throws -> RegistrationOutcome {
        let tags = String(decoding: try JSONEncoder().encode(installation.tags), as: UTF8.self)
        let call = SaveCall(
            installation: keys.installation(installation.id), handleSet: keys.handle(installation.handle),
            owned: keys.owned(by: installation.owner),
            tagCounts: keys.userTags(installation.owner), all: keys.allInstallations, id: installation.id, owner: installation.owner,
            platform: installation.platform.rawValue, handle: installation.handle, tags: tags, updated: installation.updatedAt,
            maxRegistrations: limits.registrations, maxTags: limits.tags, tagPrefix: keys.tagPrefix,
            installationPrefix: keys.installationPrefix,
            handlePrefix: keys.handlePrefix, environment: Self.storedEnvironment(installation.apnsEnvironment),
            webPushKeys: installation.webPushKeys?.stored ?? "", templates: try Self.storedTemplates(installation.templates),
            locale: installation.locale ?? "")
        let reply = try await redis.run(Self.saveScript, call)
        switch reply.string {
        case "created": return .created
        case "updated": return .updated
        case "owned": return .ownedByAnotherUser
        case "handle": return .handleTaken
        case "registrations": return .tooManyRegistrations
        case "tags": return .tooManyTags
        default: throw RedisError.unexpected(reply, expected: "a registration outcome")
        }
    }

    package func installation(id: String) async throws -> Installation? {
        try await installations(ids: [id]).first
    }

    package func delete(id: String, owner: String) async throws -> Bool {
        guard let installation = try await installation(id: id), installation.owner == owner else { return false }
        return try await remove(installation)
    }

    /// Removes an installation whoever owns it (the platform said its token is dead), unless it
    /// has another handle now: its device registered a new one after the push was sent.
    package func remove(_ installation: Installation) async throws -> Bool {
        owners.remove(installation.id)
        return try await redis.run(Self.removeScript, removeCall(id: installation.id, ifHandle: installation.handle)).int == 1
    }

    package func removeAll(owner: String) async throws -> Int {
        let ids = (try await redis.send("SMEMBERS", keys.owned(by: owner)).array ?? []).compactMap(\.string)
        for id in ids { owners.remove(id) }
        let calls = ids.map { removeCall(id: $0) }
        var removed = 0
        if !calls.isEmpty {
            for reply in try await redis.run(Self.removeScript, calls: calls) { removed += try reply.throwingError().int ?? 0 }
        }
        try await redis.send("DEL", keys.owned(by: owner), keys.userTags(owner))
        return removed
    }

    package func installationIDs(byHandles groups: [[String]]) async throws -> [[String]] {
        let handles = groups.flatMap { $0 }
        guard !handles.isEmpty else { return groups.map { _ in [] } }
        let replies = try await redis.pipeline(handles.map { RedisCommand("SMEMBERS", keys.handle($0)) })
        let members = try replies.map { try ($0.throwingError().array ?? []).compactMap(\.string) }
        var start = 0
        return groups.map { group in
            defer { start += group.count }
            return Array(Set(members[start..<start + group.count].joined())).sorted()
        }
    }

    package func installationIDs(tag: String?, cursor: Int, count: Int) async throws -> (ids: [String], next: Int) {
        try Self.scanPage(try await redis.send("SSCAN", tag.map(keys.tag) ?? keys.allInstallations, cursor, "COUNT", count))
    }

    package func firstInstallationIDs(tags: [String?], pageSize: Int) async throws -> [(ids: [String], complete: Bool)] {
        guard !tags.isEmpty else { return [] }
        let replies = try await redis.pipeline(
            tags.map { RedisCommand("SSCAN", $0.map(keys.tag) ?? keys.allInstallations, 0, "COUNT", pageSize) })
        return try replies.map { reply in
            let page = try Self.scanPage(reply)
            return (page.ids, page.next == 0)
        }
    }

    /// An SSCAN reply: the members and the next cursor (0: done).
    static func scanPage(_ reply: RedisValue) throws -> (ids: [String], next: Int) {
        try reply.throwingError()
        guard let parts = reply.array, parts.count == 2 else {
            throw RedisError(code: .unexpectedReply, message: "SSCAN answered \(reply)")
        }
        return ((parts[1].array ?? []).compactMap(\.string), parts[0].int ?? 0)
    }

    package func installationIDs(tags: [String?], pageSize: Int) async throws -> [[String]] {
        var members = Array(repeating: [String](), count: tags.count)
        var cursors = Array(repeating: 0, count: tags.count)
        var open = Array(tags.indices)
        while !open.isEmpty {
            let replies = try await redis.pipeline(
                open.map { RedisCommand("SSCAN", tags[$0].map(keys.tag) ?? keys.allInstallations, cursors[$0], "COUNT", pageSize) })
            for (index, reply) in zip(open, replies) {
                let page = try Self.scanPage(reply)
                members[index] += page.ids
                cursors[index] = page.next
            }
            open = open.filter { cursors[$0] != 0 }
        }
        return members
    }

    /// One HGETALL per installation, all sent at once; the APNs environment (no field: production),
    /// a browser's keys, the templates and the locale (no field: none) come in the same command.
    /// (The hash holds just these fields: HGETALL reads them in one pass where an HMGET of the
    /// nine looked each up, 0.81 against 1.14 µs of Redis an installation.)
    package func installations(ids: [String]) async throws -> [Installation] {
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(ids.map { RedisCommand("HGETALL", keys.installation($0)) }).map(Self.installationFields)
        // A fleet registers few distinct template sets: each is decoded once per call (Foundation's
        // JSONDecoder per device was most of a templated fan-out's extra CPU).
        var decoded: [[UInt8]: [InstallationTemplate]?] = [:]
        func templates(_ stored: [UInt8]?) -> [InstallationTemplate]? {
            guard let stored else { return [] }
            if let done = decoded[stored] { return done }
            let value = Self.templates(stored)
            if decoded.count < 1024 { decoded[stored] = .some(value) }
            return value
        }
        return zip(ids, replies).compactMap { id, fields in
            guard let platform = fields[0].string.flatMap(Platform.init(rawValue:)),
                let handle = fields[1].string, let owner = fields[3].string,
                let tags = fields[2].bytes.flatMap(JSONStringArray.parse),
                // No field: production. A value this build does not know is unreadable, as an
                // unknown platform is: the record is passed over, never sent to a guessed host.
                let environment = fields[5].string.map(APNSEnvironment.init(rawValue:)) ?? .production,
                // Templates this build cannot read: passed over, never sent a payload they did not ask for.
                let templates = templates(fields[7].bytes)
            else { return nil }
            return Installation(
                id: id, platform: platform, handle: handle, tags: tags, owner: owner, updatedAt: Int64(fields[4].int ?? 0),
                apnsEnvironment: environment, webPushKeys: fields[6].string.flatMap(WebPushKeys.init(stored:)),
                templates: templates, locale: fields[8].string)
        }
    }

    /// An installation's fields from its HGETALL reply, in the order `installations(ids:)` reads
    /// them (platform, handle, tags, owner, updated, environment, keys, templates, locale); null
    /// where the hash has no such field (all null: no installation).
    static func installationFields(_ reply: RedisValue) -> [RedisValue] {
        var fields = [RedisValue](repeating: .null, count: 9)
        guard let pairs = reply.array else { return fields }
        for pair in stride(from: 0, to: pairs.count - 1, by: 2) {
            guard case .bulk(let name) = pairs[pair] else { continue }
            let slot: Int? =
                switch String(decoding: name, as: UTF8.self) {
                case "platform": 0
                case "handle": 1
                case "tags": 2
                case "owner": 3
                case "updated": 4
                case "environment": 5
                case "keys": 6
                case "templates": 7
                case "locale": 8
                default: nil
                }
            if let slot { fields[slot] = pairs[pair + 1] }
        }
        return fields
    }

    /// The `environment` field's value: none for production (the default, as records from before
    /// the field read), the name otherwise.
    static func storedEnvironment(_ environment: APNSEnvironment) -> String {
        environment == .production ? "" : environment.rawValue
    }

    /// The `templates` field's value: none (no field) for no templates, else their JSON.
    static func storedTemplates(_ templates: [InstallationTemplate]) throws -> String {
        templates.isEmpty ? "" : String(decoding: try JSONEncoder().encode(templates), as: UTF8.self)
    }

    /// The templates of a `templates` field (none when absent), nil when unreadable.
    static func templates(_ stored: [UInt8]?) -> [InstallationTemplate]? {
        guard let stored else { return [] }
        do {
            return try JSONDecoder().decode([InstallationTemplate].self, from: Data(stored))
        } catch {
            return nil
        }
    }

    package func installationIDs(owner: String) async throws -> [String] {
        (try await redis.send("SMEMBERS", keys.owned(by: owner)).array ?? []).compactMap(\.string)
    }

    package func installations(owner: String) async throws -> [Installation] {
        let ids = (try await redis.send("SMEMBERS", keys.owned(by: owner)).array ?? []).compactMap(\.string)
        return try await installations(ids: ids).filter { $0.owner == owner }
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
