import Foundation
import RichPushCore
import RichPushQueue

/// Which dead letters a console page or bulk action means: by app, reason, time window and
/// text, within the apps the user sees. Times are absolute once parsed (a relative `-1h` is
/// resolved when the filter is read), so a confirmation bound to a filter means the same set
/// when it is used as when it was counted.
struct DeadLetterFilter: Sendable, Hashable, Codable {
    /// One app's (its id; `default` also holds jobs that name no app).
    var app: String?
    /// Part of the error (case-insensitive).
    var reason: String?
    /// A platform whose pushes failed in the job's last attempt (``Job/failedOn``).
    var platform: String?
    /// Part of the error, type, origin, id or payload (case-insensitive).
    var text: String?
    /// Died at or after (ms since 1970), and before.
    var from: Int64?
    var to: Int64?
    /// The apps the user sees (nil: all).
    var scope: [String]?

    /// Longest reason or text accepted.
    static let maxTextBytes = 200

    /// The filter of a page's query or a form, each field checked.
    init(_ form: ConsoleForm, access: ConsoleAccess, now: Int64 = JobQueue.nowMilliseconds()) throws {
        app = try ConsoleListFilter.app(form, access: access)
        for (name, value) in [("reason", form["reason"]), ("text", form["text"])] {
            guard let value else { continue }
            guard value.utf8.count <= Self.maxTextBytes else {
                throw APIError.badRequest("\(name) is longer than \(Self.maxTextBytes) bytes", code: "bad_filter")
            }
            if name == "reason" { reason = value } else { text = value }
        }
        platform = try ConsoleListFilter.platform(form)
        (from, to) = try ConsoleListFilter.window(form, now: now) { try Self.time($0, name: $1, now: $2) }
        scope = access.apps
    }

    /// An ISO 8601 time (`2026-11-26T17:00:00Z`, or without a zone: UTC), milliseconds since
    /// 1970, or relative to now: `-30s`, `-15m`, `-2h`, `-7d`.
    static func time(_ text: String, name: String, now: Int64) throws -> Int64 {
        if text.hasPrefix("-"), let unit = text.last, let amount = Int64(text.dropFirst().dropLast()), amount >= 0, amount < 100_000 {
            let scale: Int64? =
                switch unit {
                case "s": 1000;
                case "m": 60_000;
                case "h": 3_600_000;
                case "d": 86_400_000;
                default: nil
                }
            if let scale { return now - amount * scale }
        }
        if let milliseconds = Int64(text), milliseconds >= 0 { return milliseconds }
        let zoned = text.hasSuffix("Z") || text.contains("+") ? text : text + (text.count == 16 ? ":00Z" : "Z")
        if let date = ISO8601DateFormatter().date(from: zoned) { return Int64(date.timeIntervalSince1970 * 1000) }
        throw APIError.badRequest(
            "\(name): give an ISO 8601 time (2026-11-26T17:00:00Z), milliseconds, or -30s / -15m / -2h / -7d", code: "bad_filter")
    }

    /// Whether `letter` (of a stream entry that died at `at` ms) is in the set.
    func matches(_ letter: DeadLetter, at: Int64) -> Bool {
        matcher()(letter, at)
    }

    /// ``matches(_:at:)`` with the texts prepared once, for a scan of many letters.
    func matcher() -> @Sendable (DeadLetter, Int64) -> Bool {
        let reason = reason.map(CaseInsensitiveText.init), text = text.map(CaseInsensitiveText.init)
        return { [self] letter, at in
            if let from, at < from { return false }
            if let to, at >= to { return false }
            let app = Self.app(of: letter)
            if let scope, !scope.contains(app) { return false }
            if let wanted = self.app, wanted != app { return false }
            if let platform, letter.job?.failedOn.contains(platform) != true { return false }
            if let reason, !reason.found(in: letter.error) { return false }
            if let text {
                let fields = [letter.error, letter.job?.type ?? "", letter.origin, letter.id, letter.undecodable ?? ""]
                guard fields.contains(where: text.found(in:)) || letter.job.map({ text.found(inUTF8: $0.payload.prefix(4096)) }) == true
                else { return false }
            }
            return true
        }
    }

    /// A dead letter's app: its job's app, the default app for a job that names none.
    static func app(of letter: DeadLetter) -> String {
        guard let app = letter.job?.app, app != JobRequest.sharedApp else { return AppID.default.rawValue }
        return app
    }

    /// How the audit log and the confirmation show it.
    var summary: String {
        ConsoleListFilter.summary(
            app: app, middle: (platform.map { ["platform=\($0)"] } ?? []) + (reason.map { ["reason~\($0)"] } ?? []), text: text, from: from,
            to: to, scope: scope)
    }

    /// The form fields that give this filter back (for links and the confirmation's form).
    var queryPairs: [(String, String)] {
        [
            ("app", app ?? ""), ("platform", platform ?? ""), ("reason", reason ?? ""), ("text", text ?? ""),
            ("from", from.map(String.init) ?? ""), ("to", to.map(String.init) ?? ""),
        ]
    }
}
