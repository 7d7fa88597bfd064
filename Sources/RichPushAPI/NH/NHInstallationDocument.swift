import RichPushCore
import RichPushNH

/// An installation as Notification Hubs' JSON has it (`installationId`, `userId`, `platform`,
/// `pushChannel`, `tags`, `templates` of `body`, `headers`, `tags`), read into RichPush's
/// ``Installation`` and written back from one.
///
/// NH's installations belong to the hub, RichPush's to a user: one with a `userId` is that user's
/// and carries their `username:` tag (NH's implicit `$UserId:`), one without is the hub's
/// (``hubOwner``, which no user name can be). Its templates render a missing property as an empty
/// string, as NH's do.
enum NHInstallationDocument {
    /// The owner of installations without a `userId`: not a user name (`$` is in none).
    static let hubOwner = "$nh"
    /// Fields NH sets itself: taken and ignored, so that a document read can be written back.
    static let serverFields: Set<String> = ["lastActiveOn", "lastUpdate", "pushChannelExpired", "expiredPushChannel"]
    static let fields: Set<String> = serverFields.union([
        "installationId", "userId", "platform", "pushChannel", "tags", "templates", "expirationTime", "pushVariables",
    ])
    /// NH's expiry of an installation (or registration) that never expires, the only one served.
    static let never = "9999-12-31T23:59:59.9999999Z"
    static let templateFields: Set<String> = ["body", "headers", "tags", "expiry"]
    /// NH's platform names RichPush serves, and what they are here.
    static let platforms: [(name: String, platform: Platform)] = [("apns", .apns), ("fcmv1", .fcm), ("gcm", .gcm), ("browser", .webpush)]

    /// The installation `document` describes, for the id in the URL.
    static func installation(_ document: JSONValue, id: String, updatedAt: Int64) throws -> Installation {
        guard case .object(let members) = document else {
            throw NHError.badRequest(
                "the body must be an installation, a JSON object {\"installationId\", \"platform\", \"pushChannel\", \"tags\", \"templates\"}"
            )
        }
        if let unknown = members.keys.sorted().first(where: { !fields.contains($0) }) {
            throw NHError.badRequest("unknown field '\(unknown.prefix(64))'; known: \(fields.sorted().joined(separator: ", "))")
        }
        if let given = members["installationId"], given != .null, given.string != id {
            throw NHError.badRequest("'installationId' must be the id in the URL, '\(id)'")
        }
        if let expiry = members["expirationTime"], expiry != .null, expiry.string?.hasPrefix("9999-12-31") != true {
            throw NHError(
                status: 400, code: "UnsupportedField",
                message: "'expirationTime' is not served: installations here never expire (docs/nh.md); leave it out")
        }
        switch members["pushVariables"] {
        case nil, .null?, .object([:])?: break
        default:
            throw NHError(
                status: 400, code: "UnsupportedField", message: "'pushVariables' is not served (docs/nh.md); leave it out")
        }
        let names = platforms.map(\.name).joined(separator: ", ")
        guard let name = members["platform"]?.string else { throw NHError.badRequest("'platform' (a string: \(names)) is required") }
        guard let platform = platforms.first(where: { $0.name == name.lowercased() })?.platform else {
            throw NHError.badRequest("platform '\(name.prefix(32))' is not served; served: \(names)")
        }
        let (handle, keys) = try pushChannel(members["pushChannel"], platform: platform)
        var tags = try self.tags(members["tags"], field: "'tags'", max: RegistrationRoutes.maxTags)
        var owner = hubOwner
        if let user = members["userId"], user != .null {
            guard let name = user.string, User.validate(name: name) == nil else {
                throw NHError.badRequest("'userId' must be 1 to 64 letters, digits or _ . @ -")
            }
            owner = name
            tags.insert(Installation.userTag(name))
        }
        return Installation(
            id: id, platform: platform, handle: handle, tags: tags.sorted(), owner: owner, updatedAt: updatedAt, webPushKeys: keys,
            templates: try templates(members["templates"], platform: platform))
    }

    /// The installation as NH shows it (`GET`): its `userId` unless it is the hub's, its tags
    /// without that user's `username:` tag, and `lastUpdate`.
    static func document(_ installation: Installation) -> JSONValue {
        var members: [String: JSONValue] = [
            "installationId": .string(installation.id),
            "platform": .string(platforms.first { $0.platform == installation.platform }?.name ?? installation.platform.rawValue),
            "pushChannelExpired": .bool(false),
            "expirationTime": .string(never),
            "lastUpdate": .string(UTCTimestamp.iso8601(milliseconds: installation.updatedAt)),
        ]
        if let keys = installation.webPushKeys {
            members["pushChannel"] = .object(
                ["endpoint": .string(installation.handle), "p256dh": .string(keys.p256dh), "auth": .string(keys.auth)])
        } else {
            members["pushChannel"] = .string(installation.handle)
        }
        var tags = installation.tags
        if installation.owner != hubOwner {
            members["userId"] = .string(installation.owner)
            tags.removeAll { $0 == Installation.userTag(installation.owner) }
        }
        members["tags"] = .array(tags.map(JSONValue.string))
        if !installation.templates.isEmpty {
            var templates: [String: JSONValue] = [:]
            for template in installation.templates {
                var fields: [String: JSONValue] = ["body": .string(template.body)]
                if !template.headers.isEmpty { fields["headers"] = .object(template.headers.mapValues(JSONValue.string)) }
                if !template.tags.isEmpty { fields["tags"] = .array(template.tags.map(JSONValue.string)) }
                if let expiry = template.expiry { fields["expiry"] = .string(expiry) }
                templates[template.name] = .object(fields)
            }
            members["templates"] = .object(templates)
        }
        return .object(members)
    }

    /// The device's token (a string), or a browser's subscription `{"endpoint", "p256dh", "auth"}`.
    private static func pushChannel(_ value: JSONValue?, platform: Platform) throws -> (String, WebPushKeys?) {
        guard let value, value != .null else { throw NHError.badRequest("'pushChannel' is required") }
        if platform == .webpush {
            // The .NET SDK sends the subscription as a string holding its JSON.
            let value = value.string.flatMap { JSONValue.parse(Array($0.utf8), maxDepth: 2) } ?? value
            guard case .object = value else {
                throw NHError.badRequest("'pushChannel' of a browser installation is an object {\"endpoint\", \"p256dh\", \"auth\"}")
            }
            return try RegistrationRoutes.handle(["pushChannel": value], platform: .webpush)
        }
        guard let token = value.string else {
            throw NHError.badRequest("'pushChannel' of a \(platform.rawValue) installation is a string, the device's token")
        }
        if let problem = PushHandle.problem(with: token, platform: platform) { throw NHError.badRequest("pushChannel: \(problem)") }
        return (token, nil)
    }

    /// An array of up to `max` tags, each checked as a tag expression's.
    static func tags(_ value: JSONValue?, field: String, max: Int) throws -> Set<String> {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value, items.count <= max else {
            throw NHError.badRequest("\(field) is an array of up to \(max) tags")
        }
        var tags = Set<String>()
        for item in items {
            guard let tag = item.string else { throw NHError.badRequest("\(field) is an array of strings") }
            do { try TagExpression.validate(tag: tag) } catch { throw NHError.badRequest(error.message) }
            tags.insert(tag)
        }
        return tags
    }

    /// NH's `templates` (`{"name": {"body", "headers", "tags"}}`), compiled as RichPush's are,
    /// each rendering a missing property as an empty string.
    private static func templates(_ value: JSONValue?, platform: Platform) throws -> [InstallationTemplate] {
        guard let value, value != .null else { return [] }
        guard case .object(let entries) = value else {
            throw NHError.badRequest("'templates' is an object of names to {\"body\", \"headers\", \"tags\"}")
        }
        var converted: [String: JSONValue] = [:]
        for (name, entry) in entries {
            guard case .object(let fields) = entry else {
                throw NHError.badRequest("template '\(name.prefix(64))' is an object {\"body\", \"headers\", \"tags\"}")
            }
            if let unknown = fields.keys.sorted().first(where: { !templateFields.contains($0) }) {
                throw NHError.badRequest(
                    "template '\(name.prefix(64))': unknown field '\(unknown.prefix(64))'; known: body, headers, tags, expiry")
            }
            var richPush: [String: JSONValue] = [:]
            if let body = fields["body"] { richPush["Body"] = body }
            if let headers = fields["headers"] { richPush["Headers"] = headers }
            if let tags = fields["tags"] { richPush["Tags"] = tags }
            if let expiry = fields["expiry"] { richPush["Expiry"] = expiry }
            converted[name] = .object(richPush)
        }
        return try RegistrationRoutes.templates(.object(converted), platform: platform).map { template in
            var template = template
            template.missing = .empty
            return template
        }
    }
}
