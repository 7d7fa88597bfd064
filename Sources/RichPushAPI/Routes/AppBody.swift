import Hummingbird
import NIOCore
import RichPushApps
import RichPushCore
import RichPushQueue

/// The body of `POST /api/apps` and `PATCH /api/apps/{id}`, checked member by member:
/// `{"id", "name", "apns": {"key", "keyId", "teamId", "bundleId"}, "fcm": {"serviceAccount"},
/// "webPush": {"privateKey", "subject"}, "limits": {"notificationsPerMinute", "audience",
/// "payloadBytes"}, "defaultLocale", "defaultDelivery", "weight", "maxInFlight"}`. In a PATCH a platform set to `null` is removed, and
/// the limits given replace those (0: no limit) while the others stay; so do `weight` and `maxInFlight`
/// (fair scheduling's share; `maxInFlight: null` removes the cap), 400 out of ``AppShare``' bounds.
struct AppBody {
    var id: AppID?
    var change = AppChange()
    /// The limits given, by name (``AppLimits/names``).
    var limits: [String: Int] = [:]
    /// A Web Push subject given without a private key (keep or make the key pair).
    var webPushSubject: String?
    /// The weight given, and the cap (`.some(nil)`: none).
    var weight: Int?
    var maxInFlight: Int??

    static func parse(_ buffer: ByteBuffer, creating: Bool) async throws -> AppBody {
        guard case .object(let members)? = JSONValue.parse(Array(buffer: buffer), maxDepth: 4) else {
            throw APIError.badRequest(
                "the body must be a JSON object {\"id\", \"name\", \"apns\", \"fcm\", \"webPush\"} at most 4 levels deep",
                code: "malformed_json")
        }
        let allowed =
            (creating ? ["id"] : []) + [
                "name", "apns", "fcm", "webPush", "limits", "defaultLocale", "defaultDelivery", "weight", "maxInFlight",
            ]
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.badRequest("unknown field '\(unknown)'; known fields: \(allowed.joined(separator: ", "))", code: "unknown_field")
        }
        var body = AppBody()
        if creating, let value = members["id"] {
            guard let text = value.string else { throw APIError.unprocessable("'id' must be a string", code: "wrong_type") }
            body.id = try await AppRoutes.mapped { () throws(AppError) in try AppID(text) }
        }
        if let value = members["name"] {
            guard let name = value.string else { throw APIError.unprocessable("'name' must be a string", code: "wrong_type") }
            if let problem = AppChange.nameProblem(name) { throw APIError.unprocessable("name: \(problem)", code: "invalid") }
            body.change.name = name
        }
        if let value = members["defaultLocale"] {
            switch value {
            case .null where !creating:
                body.change.defaultLocale = .some(nil)
            case .string(let text):
                guard let locale = LocaleTag(text) else {
                    throw APIError.unprocessable("defaultLocale: '\(text.prefix(40))' is not a BCP 47 locale (en, fr-CA)", code: "invalid")
                }
                body.change.defaultLocale = .some(locale)
            default:
                throw APIError.unprocessable(
                    "'defaultLocale' must be a BCP 47 locale such as \"en\" (or null in a PATCH to remove it)", code: "wrong_type")
            }
        }
        if let value = members["defaultDelivery"] {
            switch value {
            case .null where !creating:
                body.change.defaultDelivery = .some(nil)
            case .string(let text):
                guard let mode = PushRenderer.Mode(rawValue: text) else {
                    throw APIError.unprocessable("defaultDelivery: '\(text.prefix(40))' is not silent, alert or auto", code: "invalid")
                }
                body.change.defaultDelivery = .some(mode)
            default:
                throw APIError.unprocessable(
                    "'defaultDelivery' must be \"silent\", \"alert\" or \"auto\" (or null in a PATCH to remove it)", code: "wrong_type")
            }
        }
        if let value = members["limits"] {
            guard case .object(let fields) = value else { throw APIError.unprocessable("'limits' must be an object", code: "wrong_type") }
            try Self.refuseUnknown(fields, AppLimits.names, in: "limits")
            for (name, value) in fields {
                guard let number = value.int, (0...AppLimits.maximum).contains(number) else {
                    throw APIError.unprocessable(
                        "limits.\(name) must be an integer from 0 (no limit) to \(AppLimits.maximum)", code: "invalid")
                }
                body.limits[name] = number
            }
        }
        if let value = members["weight"] {
            guard let weight = value.int, AppShare.weights.contains(weight) else {
                throw APIError.unprocessable(AppShare.weightProblem, code: "invalid_weight")
            }
            body.weight = weight
        }
        if let value = members["maxInFlight"] {
            if case .null = value {
                body.maxInFlight = .some(nil)
            } else {
                guard let cap = value.int, AppShare.caps.contains(cap) else {
                    throw APIError.unprocessable(AppShare.capProblem, code: "invalid_max_in_flight")
                }
                body.maxInFlight = .some(cap)
            }
        }
        for platform in AppPlatform.allCases {
            guard let value = members[platform.rawValue] else { continue }
            if case .null = value {
                guard !creating else {
                    throw APIError.unprocessable("'\(platform.rawValue)' is null: leave it out instead", code: "wrong_type")
                }
                body.change.remove.insert(platform)
                continue
            }
            guard case .object(let fields) = value else {
                throw APIError.unprocessable("'\(platform.rawValue)' must be an object (or null to remove it)", code: "wrong_type")
            }
            try await body.read(platform, fields)
        }
        return body
    }

    private mutating func read(_ platform: AppPlatform, _ fields: [String: JSONValue]) async throws {
        switch platform {
        case .apns:
            try Self.refuseUnknown(fields, ["key", "keyId", "teamId", "bundleId"], in: "apns")
            let key = try Self.string(fields, "key", in: "apns"), keyID = try Self.string(fields, "keyId", in: "apns")
            let teamID = try Self.string(fields, "teamId", in: "apns"), bundleID = try Self.string(fields, "bundleId", in: "apns")
            change.set.apns = try await AppRoutes.mapped { () throws(AppError) in
                try APNSCredential(keyPEM: key, keyID: keyID, teamID: teamID, bundleID: bundleID)
            }
        case .fcm:
            try Self.refuseUnknown(fields, ["serviceAccount"], in: "fcm")
            let json: String
            switch fields["serviceAccount"] {
            case .string(let text)?: json = text
            case .object(let members)?: json = try Self.stringObject(members)
            default:
                throw APIError.unprocessable(
                    "fcm.serviceAccount (the service-account JSON, as an object or its text) is required", code: "missing_field")
            }
            change.set.fcm = try await AppRoutes.mapped { () throws(AppError) in try FCMCredential(serviceAccountJSON: json) }
        case .webPush:
            try Self.refuseUnknown(fields, ["privateKey", "subject"], in: "webPush")
            let subject = try fields["subject"].map { value in
                guard let text = value.string else { throw APIError.unprocessable("webPush.subject must be a string", code: "wrong_type") }
                return text
            }
            if let privateKey = try fields["privateKey"].map({ value in
                guard let text = value.string else {
                    throw APIError.unprocessable("webPush.privateKey must be a string", code: "wrong_type")
                }
                return text
            }) {
                change.set.webPush = try await AppRoutes.mapped { () throws(AppError) in
                    try WebPushCredential(privateKey: privateKey, subject: subject ?? "")
                }
            } else {
                webPushSubject = subject ?? ""
            }
        }
    }

    /// `current` with the limits this body gives; nil when it gives none.
    func limits(over current: AppLimits) -> AppLimits? {
        guard !limits.isEmpty else { return nil }
        return current.replacing(
            notificationsPerMinute: limits["notificationsPerMinute"], audience: limits["audience"], payloadBytes: limits["payloadBytes"])
    }

    /// `current` with the weight and cap this body gives; nil when it gives neither.
    func scheduling(over current: AppShare) -> AppShare? {
        guard weight != nil || maxInFlight != nil else { return nil }
        return AppShare(weight: weight ?? current.weight, maxInFlight: maxInFlight ?? current.maxInFlight)
    }

    private static func refuseUnknown(_ fields: [String: JSONValue], _ allowed: [String], in object: String) throws {
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.badRequest(
                "unknown field '\(object).\(unknown)'; known: \(allowed.joined(separator: ", "))", code: "unknown_field")
        }
    }

    private static func string(_ fields: [String: JSONValue], _ name: String, in object: String) throws -> String {
        guard let value = fields[name] else { throw APIError.unprocessable("\(object).\(name) is required", code: "missing_field") }
        guard let text = value.string else { throw APIError.unprocessable("\(object).\(name) must be a string", code: "wrong_type") }
        return text
    }

    /// A service account given as an object: its members are all strings in Google's files.
    private static func stringObject(_ members: [String: JSONValue]) throws -> String {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            guard let text = value.string else {
                throw APIError.unprocessable("fcm.serviceAccount.\(name) must be a string, as in the file Google gives", code: "wrong_type")
            }
            writer.field(name, text)
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
