/// What keeps an app from being created or removed without surprise to its users.
package enum AppGuards {
    /// Why app `id` cannot be created, or nil: once it exists, the Basic user name `bob@<id>`
    /// signs in to it, so a user of the default app named so would lose their sign-in.
    package static func creationProblem(_ id: AppID, defaultUsers: any UserStore) async throws -> String? {
        let suffix = "@" + id.rawValue
        let shadowed = try await defaultUsers.list().map(\.name).filter { $0.hasSuffix(suffix) }
        guard let first = shadowed.first else { return nil }
        return
            "the default app has \(shadowed.count) user(s) named '…\(suffix)' (\(first)), who sign in as '<name>@<app>' would then name app '\(id)'; "
            + "rename or remove them first, or choose another id"
    }

    /// Why app `id` cannot be removed, or nil: its users (and what they own) would be left
    /// unreachable in Redis.
    package static func removalProblem(_ id: AppID, users: any UserStore) async throws -> String? {
        let count = try await users.list().count
        guard count > 0 else { return nil }
        return
            "app '\(id)' still has \(count) user(s); remove them first (richpush users remove --app \(id) <name>: it removes their devices, notifications and keys too)"
    }
}
