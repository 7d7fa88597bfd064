package import RichPushCore
import Synchronization

/// Installations in memory with the Redis store's rules (ownership, one handle per owner,
/// limits), for fast unit tests of logic.
package final class InMemoryInstallationStore: InstallationStore {
    private let all = Mutex<[String: Installation]>([:])
    private let counter = Atomic<Int>(0)

    package init(_ installations: [Installation] = []) {
        all.withLock { all in for installation in installations { all[installation.id] = installation } }
    }

    package func registrationID(forHandle handle: String?, owner: String) async throws -> String {
        if let handle, let existing = all.withLock({ $0.values.filter { $0.handle == handle && $0.owner == owner }.map(\.id).min() }) {
            return existing
        }
        return "mem-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    package func save(_ installation: Installation, limits: RegistrationLimits) async throws -> RegistrationOutcome {
        all.withLock { all in
            if let existing = all[installation.id], existing.owner != installation.owner { return .ownedByAnotherUser }
            if all.values.contains(where: { $0.handle == installation.handle && $0.owner != installation.owner }) { return .handleTaken }
            let mine = all.values.filter { $0.owner == installation.owner && $0.id != installation.id }
            if limits.registrations > 0 && mine.count >= limits.registrations { return .tooManyRegistrations }
            if limits.tags > 0 && Set(mine.flatMap(\.tags) + installation.tags).count > limits.tags { return .tooManyTags }
            let outcome: RegistrationOutcome = all[installation.id] == nil ? .created : .updated
            all[installation.id] = installation
            return outcome
        }
    }

    package func installation(id: String) async throws -> Installation? {
        all.withLock { $0[id] }
    }

    package func owner(of id: String) async throws -> String? {
        all.withLock { $0[id]?.owner }
    }

    package func delete(id: String, owner: String) async throws -> Bool {
        all.withLock { all in
            guard all[id]?.owner == owner else { return false }
            all[id] = nil
            return true
        }
    }

    package func remove(_ installation: Installation) async throws -> Bool {
        all.withLock { all in
            guard all[installation.id]?.handle == installation.handle else { return false }
            return all.removeValue(forKey: installation.id) != nil
        }
    }

    package func installationIDs(tag: String?, cursor: Int, count: Int) async throws -> (ids: [String], next: Int) {
        let ids = members(tag)
        let end = min(ids.count, cursor + count)
        return (Array(ids[min(cursor, end)..<end]), end >= ids.count ? 0 : end)
    }

    package func installationIDs(tags: [String?], pageSize: Int) async throws -> [[String]] {
        tags.map(members)
    }

    package func firstInstallationIDs(tags: [String?], pageSize: Int) async throws -> [(ids: [String], complete: Bool)] {
        tags.map { tag in
            let ids = members(tag)
            return (Array(ids.prefix(max(1, pageSize))), ids.count <= max(1, pageSize))
        }
    }

    package func installationIDs(byHandles groups: [[String]]) async throws -> [[String]] {
        all.withLock { all in groups.map { handles in all.values.filter { handles.contains($0.handle) }.map(\.id).sorted() } }
    }

    package func installations(ids: [String]) async throws -> [Installation] {
        all.withLock { all in ids.compactMap { all[$0] } }
    }

    package func installations(owner: String) async throws -> [Installation] {
        all.withLock { $0.values.filter { $0.owner == owner }.sorted { $0.id < $1.id } }
    }

    package func installationIDs(owner: String) async throws -> [String] {
        try await installations(owner: owner).map(\.id)
    }

    package func removeAll(owner: String) async throws -> Int {
        all.withLock { all in
            let mine = all.values.filter { $0.owner == owner }.map(\.id)
            for id in mine { all[id] = nil }
            return mine.count
        }
    }

    private func members(_ tag: String?) -> [String] {
        all.withLock { all in all.values.filter { tag == nil || $0.tags.contains(tag!) }.map(\.id).sorted() }
    }
}
