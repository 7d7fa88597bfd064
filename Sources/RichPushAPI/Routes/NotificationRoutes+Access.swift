import RichPushCore

/// Who may read a notification: its creator, an admin, or a user to one of whose devices it was
/// addressed when it was sent (a tag added later grants nothing). Anything else is 404, as if it
/// did not exist, since ids are sequential.
///
/// Someone else's id and a missing one cost the same work, so timing does not tell them apart
/// either: a plain user's read is decided by the store's read check alone (``ReadCheck``, made
/// in Redis in the same step as what the read records), and the record is looked up only once
/// the check let the read through. Only the caller's own records, or an admin's, are taken from
/// the cache at once: there is nothing to hide from them.
extension NotificationRoutes {
    /// What a read of notification `id` found.
    struct ReadLookup<Checked: Sendable>: Sendable {
        /// The record; nil when there is none, or when the check did not let the caller read it.
        var record: RichNotification?
        /// The installations that decided the read; nil when the caller may read it anyway (its
        /// creator, an admin).
        var addressees: [String]?
        /// What `check` said; nil when it was not made (an admin, or the caller's own record
        /// found in the cache).
        var checked: Checked?
    }

    /// Looks up notification `id` for `user`: a plain user's devices, then `check` made with
    /// them (``ReadCheck/user(_:installations:)``), then, if `allows` says the check let the read
    /// through, the record. `via`: one of the user's installations (404 if it is not) that decides
    /// alone, in one lookup, instead of every installation the user has.
    func lookUp<Checked: Sendable>(
        _ id: Int, by user: User, via installation: String?,
        check: @escaping @Sendable (ReadCheck) async throws -> Checked,
        allows: (Checked) -> Bool
    ) async throws -> ReadLookup<Checked> {
        if let cached = cachedRecord(id), cached.creator == user.name || user.role == .admin {
            if let installation { try await checkOwned(installation, by: user) }
            return ReadLookup(record: cached)
        }
        if user.role == .admin {
            if let installation { try await checkOwned(installation, by: user) }
            return ReadLookup(record: try await notifications.notification(id: id))
        }
        let devices = try await devices(of: user, via: installation)
        let checked = try await check(.user(user.name, installations: devices))
        guard allows(checked) else { return ReadLookup(record: nil, addressees: devices, checked: checked) }
        var found = cachedRecord(id)
        if found == nil { found = try await notifications.notification(id: id) }
        return ReadLookup(record: found, addressees: found?.creator == user.name ? nil : devices, checked: checked)
    }

    /// ``lookUp(_:by:via:check:allows:)`` for a check that answers whether the read is allowed.
    func lookUp(
        _ id: Int, by user: User, via installation: String?, check: @escaping @Sendable (ReadCheck) async throws -> Bool
    ) async throws -> ReadLookup<Bool> {
        try await lookUp(id, by: user, via: installation, check: check, allows: { $0 })
    }

    /// The record, if `user` may read it (404 otherwise), and the installations that decided it
    /// (nil for its creator and admins).
    func readable(_ id: Int, by user: User, via installation: String? = nil) async throws -> (RichNotification, addressees: [String]?) {
        let lookup = try await lookUp(id, by: user, via: installation) { [notifications] check in
            try await notifications.isReadable(id: id, check)
        }
        guard let record = lookup.record else { throw APIError.notFound("no notification \(id)") }
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
