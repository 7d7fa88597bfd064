/// What a user may do in the operator's console (`/console`): a role, and optionally the apps
/// they see. Set by `richpush users set-role`; a user without one cannot sign in to the console.
/// It is apart from ``User/Role`` (what a user may do through `/api`): an API admin is no
/// console user until given a console role, and a console viewer sends nothing through `/api`.
package struct ConsoleAccess: Sendable, Hashable {
    /// Ordered: each role may do what the roles before it may.
    package enum Role: String, Sendable, Hashable, CaseIterable, Comparable {
        /// Sees every page but the audit log; changes nothing.
        case viewer
        /// Also acts: replays dead letters.
        case `operator`
        /// Also reads the audit log.
        case admin

        package static func < (lhs: Role, rhs: Role) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    package var role: Role
    /// The apps this user sees and acts on, sorted; nil: every app.
    package var apps: [String]?

    package init(role: Role, apps: [String]? = nil) {
        self.role = role
        self.apps = apps.map { Array(Set($0)).sorted() }
    }

    /// Most apps one user may be scoped to (the scope is stored in the user's record and checked
    /// on every request).
    package static let maxApps = 100

    /// Whether this user sees `app` (`_`, a job that names no app, is the default app's).
    package func sees(app: String) -> Bool {
        guard let apps else { return true }
        return apps.contains(app == "_" ? AppID.default.rawValue : app)
    }

    /// The stored form of the scope: the app ids comma-separated, "" for every app.
    package var storedApps: String { apps?.joined(separator: ",") ?? "" }

    /// Reads the stored role and scope; nil when there is no console role (or it is not one).
    package init?(stored role: String?, apps: String?) {
        guard let role = role.flatMap(Role.init(rawValue:)) else { return nil }
        let list = (apps ?? "").split(separator: ",").map(String.init)
        self.init(role: role, apps: list.isEmpty ? nil : list)
    }

    /// Parses `--apps a,b`: app ids, at most ``maxApps``; the problem, if any.
    package static func parseApps(_ text: String) -> Result<[String], ConsoleAccessError> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty, parts.count <= maxApps else {
            return .failure(ConsoleAccessError("give 1 to \(maxApps) app ids, comma-separated"))
        }
        for part in parts {
            if let problem = AppID.problem(part) { return .failure(ConsoleAccessError("app '\(part.prefix(64))': \(problem)")) }
        }
        return .success(parts)
    }
}

/// A console role or scope that cannot be stored, with what is wrong.
package struct ConsoleAccessError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
