import Foundation
import RichPushCore
import RichPushQueue
import RichPushStorage

/// Which scheduled sends and retries (the queue's delayed set) a console page or a cancel means:
/// by app, kind, due time and text, within the apps the user sees. Times are absolute once parsed,
/// as in ``DeadLetterFilter``, so a confirmation means the same set when it is used.
struct DelayedFilter: Sendable, Hashable, Codable {
    enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case all, scheduled, retry
    }

    var app: String?
    var kind: Kind = .all
    /// A platform whose pushes failed or were held in the job's last attempt (a retry's; a
    /// scheduled send has none yet).
    var platform: String?
    /// Part of the job's type, payload (its notification), origin or last error (case-insensitive).
    var text: String?
    /// Due at or after (ms since 1970), and before.
    var from: Int64?
    var to: Int64?
    /// The apps the user sees (nil: all).
    var scope: [String]?

    init(_ form: ConsoleForm, access: ConsoleAccess, now: Int64 = JobQueue.nowMilliseconds()) throws {
        app = try ConsoleListFilter.app(form, access: access)
        if let kind = form["kind"] {
            guard let parsed = Kind(rawValue: kind) else {
                throw APIError.badRequest("kind must be all, scheduled or retry", code: "bad_filter")
            }
            self.kind = parsed
        }
        if let text = form["text"] {
            guard text.utf8.count <= DeadLetterFilter.maxTextBytes else {
                throw APIError.badRequest("text is longer than \(DeadLetterFilter.maxTextBytes) bytes", code: "bad_filter")
            }
            self.text = text
        }
        platform = try ConsoleListFilter.platform(form)
        (from, to) = try ConsoleListFilter.window(form, now: now) { try Self.time($0, name: $1, now: $2) }
        scope = access.apps
    }

    /// As ``DeadLetterFilter/time(_:name:now:)``, and ahead of now too: `+30m`, `+2h`, `+7d`.
    static func time(_ text: String, name: String, now: Int64) throws -> Int64 {
        if text.hasPrefix("+") {
            let behind = try DeadLetterFilter.time("-" + text.dropFirst(), name: name, now: now)
            return now + (now - behind)
        }
        return try DeadLetterFilter.time(text, name: name, now: now)
    }

    /// A delayed job's app: its queue app, the default app for a job that names none.
    static func app(of job: DelayedJob) -> String {
        job.app == JobRequest.sharedApp ? AppID.default.rawValue : job.app
    }

    func matches(_ job: DelayedJob) -> Bool {
        matcher()(job)
    }

    /// ``matches(_:)`` with the text prepared once, for a scan of many jobs.
    func matcher() -> @Sendable (DelayedJob) -> Bool {
        let text = text.map(CaseInsensitiveText.init)
        return { [self] job in
            if let from, job.due < from { return false }
            if let to, job.due >= to { return false }
            let app = Self.app(of: job)
            if let scope, !scope.contains(app) { return false }
            if let wanted = self.app, wanted != app { return false }
            if let platform, job.job?.failedOn.contains(platform) != true { return false }
            switch kind {
            case .all: break
            case .scheduled: if job.isRetry { return false }
            case .retry: if !job.isRetry { return false }
            }
            if let text {
                let fields = [job.job?.type ?? "", job.job?.origin ?? "", job.job?.lastError ?? ""]
                guard fields.contains(where: text.found(in:)) || job.job.map({ text.found(inUTF8: $0.payload.prefix(4096)) }) == true else {
                    return false
                }
            }
            return true
        }
    }

    /// The notification a scheduled send delivers (`app:id`), when it is one a cancel can stop: a
    /// rich push's own job that has not run yet (a retry or a fan-out's share is not cancelled here).
    static func notification(of job: DelayedJob) -> (app: AppID, id: Int)? {
        guard !job.isRetry, let queued = job.job, queued.type == RichPushJob.type,
            let delivery = try? RichPushJob.delivery(of: queued)
        else { return nil }
        return (delivery.app, delivery.notification)
    }

    var summary: String {
        ConsoleListFilter.summary(
            app: app, middle: (kind == .all ? [] : ["kind=\(kind.rawValue)"]) + (platform.map { ["platform=\($0)"] } ?? []), text: text,
            from: from, to: to, scope: scope)
    }

    var queryPairs: [(String, String)] {
        [
            ("app", app ?? ""), ("kind", kind == .all ? "" : kind.rawValue), ("platform", platform ?? ""), ("text", text ?? ""),
            ("from", from.map(String.init) ?? ""),
            ("to", to.map(String.init) ?? ""),
        ]
    }
}
