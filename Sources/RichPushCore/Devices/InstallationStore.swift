/// What saving a registration did.
package enum RegistrationOutcome: Sendable, Hashable {
    case created, updated
    /// The id belongs to someone else's installation.
    case ownedByAnotherUser
    /// Another user's installation holds this push handle (a device changes owner only after
    /// its registration is deleted).
    case handleTaken
    /// The owner already has the most registrations allowed.
    case tooManyRegistrations
    /// The owner's registrations would carry more distinct tags than allowed.
    case tooManyTags
}

/// Per-user bounds on registrations; 0 is no bound.
package struct RegistrationLimits: Sendable, Hashable {
    package var registrations: Int
    package var tags: Int

    package init(registrations: Int = 0, tags: Int = 0) {
        self.registrations = registrations
        self.tags = tags
    }
}

/// Where installations (device registrations) and their tag index live.
package protocol InstallationStore: Sendable {
    /// The seed's `POST /api/register?handle=`: if registrations exist for the handle, keeps one
    /// (returns its id) and deletes the others; else returns a new id.
    func registrationID(forHandle handle: String?, owner: String) async throws -> String
    /// Creates or updates a registration atomically, checking ownership, the handle and `limits`.
    func save(_ installation: Installation, limits: RegistrationLimits) async throws -> RegistrationOutcome
    func installation(id: String) async throws -> Installation?
    /// Who owns the installation (nil: there is none); may be remembered for a few seconds.
    func owner(of id: String) async throws -> String?
    /// Deletes it if `owner` owns it; false if there is none or it is someone else's.
    func delete(id: String, owner: String) async throws -> Bool
    /// Removes an installation whoever owns it (the platform said its token is dead), unless it
    /// has another handle now (its device registered a new one after the push was sent): false then.
    func remove(_ installation: Installation) async throws -> Bool
    /// Installations carrying the tag (every installation when `tag` is nil), in batches for
    /// fan-out; `next` is 0 after the last batch.
    func installationIDs(tag: String?, cursor: Int, count: Int) async throws -> (ids: [String], next: Int)
    /// Every member of each tag (every installation for a nil tag), in order of `tags`; the
    /// scans of all tags advance together, one pipelined round trip per page.
    func installationIDs(tags: [String?], pageSize: Int) async throws -> [[String]]
    /// The first page of each tag's members (every installation's for a nil tag), in order of
    /// `tags`, all in one pipelined round trip; `complete` says the page held every member.
    func firstInstallationIDs(tags: [String?], pageSize: Int) async throws -> [(ids: [String], complete: Bool)]
    func installations(ids: [String]) async throws -> [Installation]
    /// For each group of handles (one device's spellings of its handle), in order, the ids of the
    /// installations whose push handle is one of them (each exactly as registered), all looked up
    /// together (one pipelined round trip on Redis).
    func installationIDs(byHandles groups: [[String]]) async throws -> [[String]]
    /// Installations of one user.
    func installations(owner: String) async throws -> [Installation]
    /// The ids of one user's installations (no record is read).
    func installationIDs(owner: String) async throws -> [String]
    /// Removes every installation of a user (the user is being removed); returns how many.
    func removeAll(owner: String) async throws -> Int
}

extension InstallationStore {
    /// The ids of the installations whose push handle is one of `handles`, sorted.
    package func installationIDs(handles: [String]) async throws -> [String] {
        Set(try await installationIDs(byHandles: [handles]).joined()).sorted()
    }
}
