import RichPushCore

/// A send's `ServiceBusNotification-Tags` as RichPush targets it: none is every installation of
/// the hub (``TagExpression/everyone``); NH's implicit `$UserId:{name}` is RichPush's user tag
/// `username:name`; `$InstallationId:{id}` names installations (``installations(tagsHeader:)``);
/// and NH's limits on an expression hold (20 tags joined by `||` alone, 6 once `&&` or `!` appears).
package enum NHSendTarget {
    /// The most tags of an expression of `||` alone.
    package static let maxOrTags = 20
    /// The most tags of an expression with `&&` or `!`.
    package static let maxMixedTags = 6

    /// The target for the header's value (nil: absent), or NH's 400.
    package static func target(tagsHeader: String?) throws(NHError) -> String {
        let text = (tagsHeader ?? "").trimmingWhitespace()
        guard !text.isEmpty else { return TagExpression.everyone }
        let translated = try userTags(in: text)
        let expression: TagExpression
        do {
            expression = try TagExpression(parsing: translated)
        } catch {
            throw NHError.badRequest("ServiceBusNotification-Tags: \(error.message)")
        }
        if case .all = expression {
            throw NHError.badRequest("ServiceBusNotification-Tags: '*' is no tag; leave the header out to send to every device")
        }
        let count = expression.tags.count
        let limit = isOrOnly(expression) ? maxOrTags : maxMixedTags
        guard count <= limit else {
            throw NHError.badRequest(
                "ServiceBusNotification-Tags names \(count) tags; NH allows \(maxOrTags) joined by || alone and \(maxMixedTags) once && or ! appears"
            )
        }
        return translated
    }

    /// The installations a header of `$InstallationId:{id}` terms joined by `||` names (up to 20),
    /// or nil when it names none; NH's implicit installation tag combined otherwise is refused.
    package static func installations(tagsHeader: String?) throws(NHError) -> [String]? {
        guard let text = tagsHeader, text.lowercased().contains("$installationid:") else { return nil }
        var ids: [String] = []
        for term in text.split(separator: "||", omittingEmptySubsequences: false) {
            let term = term.trimmingWhitespace()
            let prefix = "$installationid:{"
            guard term.lowercased().hasPrefix(prefix), term.hasSuffix("}") else {
                throw NHError.badRequest(
                    "ServiceBusNotification-Tags: $InstallationId:{id} is served joined with || to others of its kind only")
            }
            let id = term.dropFirst(prefix.count).dropLast()
            guard NHInstallationID.isValid(id) else {
                throw NHError.badRequest("ServiceBusNotification-Tags: \(NHInstallationID.rule)")
            }
            if !ids.contains(String(id)) { ids.append(String(id)) }
        }
        guard ids.count <= maxOrTags else {
            throw NHError.badRequest("ServiceBusNotification-Tags names \(ids.count) installations; NH allows \(maxOrTags)")
        }
        return ids
    }

    /// `$UserId:{name}` (any case, braces as NH requires them) becomes `username:name`;
    /// `$InstallationId:{…}` and any other `$` form are refused, not served.
    static func userTags(in text: String) throws(NHError) -> String {
        guard text.contains("$") else { return text }
        var result = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            rest = rest[dollar...]
            let prefix = "$userid:{"
            guard rest.lowercased().hasPrefix(prefix), let close = rest.firstIndex(of: "}") else {
                throw NHError.badRequest(
                    "ServiceBusNotification-Tags: NH's implicit tags are $UserId:{name}, and $InstallationId:{id} joined with || to others of its kind"
                )
            }
            let name = rest[rest.index(rest.startIndex, offsetBy: prefix.count)..<close]
            if let problem = User.validate(name: String(name)) {
                throw NHError.badRequest("ServiceBusNotification-Tags: $UserId:{\(name.prefix(64))}: \(problem)")
            }
            result += "username:" + name
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    private static func isOrOnly(_ expression: TagExpression) -> Bool {
        switch expression {
        case .all, .tag: true
        case .or(let left, let right): isOrOnly(left) && isOrOnly(right)
        case .and, .not: false
        }
    }
}
