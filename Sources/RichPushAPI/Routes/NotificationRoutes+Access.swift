import RichPushCore

/// Who may read a notification: its creator, an admin, or a user to one of whose devices it was
/// addressed when it was sent (a tag added later grants nothing). Anything else is 404, as if it
/// did not exist, since ids are sequential.
///
/// Someone else's id and a missing one cost the same work, so timing does not tell them apart
/// either: the record is read from Redis (not from this process's cache) beside the caller's
/// devices lookup and the read check made with them, which finds a missing id addressed to
/// nobody. Before, a missing id was answered after one round trip and someone else's after two
/// or three (255 µs apart in a hostile-input run). Only the caller's own records, or an
/// admin's, are taken from the cache at once: there is nothing to hide from them.
extension NotificationRoutes {
    /// What a read of notification `id` found.
    struct ReadLookup<Checked: Sendable>: Sendable {
        var record: RichNotification?
        /// The installations whose addressing decides the read; nil when the caller may read it
        /// anyway (its creator, an admin).
        var addressees: [String]?
        /// What `check` said of those installations; nil when it was not made (an admin, or the
        /// caller's own record found in the cache).
        var checked: Checked?
    }

    /// Looks up notification `id` for `user`: the record, beside the caller's devices and
    /// `check` made with them (a plain user's; an admin has none). `via`: one of the user's
    /// installations (404 if it is not) that decides alone, in one lookup, instead of every
    /// installation the user has. `check` must be safe for a record that does not exist or that
    /// `user` created (the store's read checks are).
    func lookUp<Checked: Sendable>(
        _ id: Int, by user: User, via installation: String?,
        check: @escaping @Sendable ([String]) async throws -> Checked
    ) async throws -> ReadLookup<Checked> {
        if let cached = cachedRecord(id), cached.creator == user.name || user.role == .admin {
            if let installation { try await checkOwned(installation, by: user) }
            return ReadLookup(record: cached)
        }
        if user.role == .admin {
            if let installation { try await checkOwned(installation, by: user) }
            return ReadLookup(record: try await notifications.notification(id: id))
        }
        async let record = notifications.notification(id: id)
        let devices = try await devices(of: user, via: installation)
        let checked = try await check(devices)
        let found = try await record
        return ReadLookup(record: found, addressees: found?.creator == user.name ? nil : devices, checked: checked)
    }

    /// The record, if `user` may read it (404 otherwise), and the installations that decided it
    /// (nil for its creator and admins).
    func readable(_ id: Int, by user: User, via installation: String? = nil) async throws -> (RichNotification, addressees: [String]?) {
        let lookup = try await lookUp(id, by: user, via: installation) { [notifications] devices in
            try await notifications.wasAddressed(id: id, to: devices)
        }
        guard let record = lookup.record, lookup.addressees == nil || lookup.checked == true else {
            throw APIError.notFound("no notification \(id)")
        }
        return (record, lookup.addressees)
    }

    /// The installations that decide a plain user's read: the one named, if it is theirs, or all
    /// of theirs.
    private func devices(of user: User, via installation: String?) async throws -> [String] {
        if let installation {
            try await checkOwned(installation, by: user)
            return [installation]
        }
        return try await installations.installationIDs(owner: user.name)
    }

    /// 404 unless `installation` is one of the user's registrations.
    func checkOwned(_ installation: String, by user: User) async throws {
        guard installation.utf8.count <= 128, try await installations.owner(of: installation) == user.name else {
            throw APIError.notFound("no registration \(installation.prefix(128)) of yours")
        }
    }
}
