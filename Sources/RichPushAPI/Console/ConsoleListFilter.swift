import RichPushCore

/// What the dead letters' and the queues' filters share: an app the user sees, a time window, and
/// how a filter is shown in the audit log and the confirmation.
enum ConsoleListFilter {
    /// The form's `app`, if any: a valid id of an app the user sees.
    static func app(_ form: ConsoleForm, access: ConsoleAccess) throws -> String? {
        guard let app = form["app"] else { return nil }
        if let problem = AppID.problem(app) { throw APIError.badRequest("app: \(problem)", code: "bad_filter") }
        guard access.sees(app: app) else { throw APIError(.forbidden, code: "console_forbidden", message: "you do not see app \(app)") }
        return app
    }

    /// The form's `platform` (`apns`, `fcm`, `webpush`, …, as registrations name it; `browser`
    /// is `webpush`), or nil.
    static func platform(_ form: ConsoleForm) throws -> String? {
        guard let text = form["platform"] else { return nil }
        guard text.utf8.count <= 16, let platform = Platform(seedName: text) else {
            throw APIError.badRequest(
                "platform must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))", code: "bad_filter")
        }
        return platform.rawValue
    }

    /// The `<select>` of a filter's platform: any, or one.
    static func platformOptions(selected: String?) -> [HTML] {
        ["<option value=\"\"\(selected == nil ? " selected" : "" as HTML)>any</option>"]
            + Platform.allCases.map {
                "<option value=\"\($0.rawValue)\"\(selected == $0.rawValue ? " selected" : "" as HTML)>\($0.rawValue)</option>"
            }
    }

    /// The form's `from` and `to`, read by `time`, `from` before `to`.
    static func window(_ form: ConsoleForm, now: Int64, time: (String, String, Int64) throws -> Int64) throws -> (from: Int64?, to: Int64?)
    {
        let from = try form["from"].map { try time($0, "from", now) }
        let to = try form["to"].map { try time($0, "to", now) }
        if let from, let to, from >= to { throw APIError.badRequest("from must be before to", code: "bad_filter") }
        return (from, to)
    }

    /// `app=… <middle> text~… from=… to=… scope=…`, or `all`.
    static func summary(app: String?, middle: [String], text: String?, from: Int64?, to: Int64?, scope: [String]?) -> String {
        var parts: [String] = []
        if let app { parts.append("app=\(app)") }
        parts += middle
        if let text { parts.append("text~\(text)") }
        if let from { parts.append("from=\(ConsolePage.time(from))") }
        if let to { parts.append("to=\(ConsolePage.time(to))") }
        if let scope { parts.append("scope=\(scope.joined(separator: ","))") }
        return parts.isEmpty ? "all" : parts.joined(separator: " ")
    }
}
