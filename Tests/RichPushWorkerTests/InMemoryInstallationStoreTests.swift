import RichPushCore
import RichPushInMemory
import Testing

/// The in-memory store keeps an installation's APNs environment as the Redis store does: as
/// given, production by default, replaced by an update.
@Suite("In-memory installations")
struct InMemoryInstallationStoreTests {
    @Test func keepsTheAPNsEnvironment() async throws {
        let store = InMemoryInstallationStore()
        let production = Installation(id: "p", platform: .apns, handle: "hp", tags: ["username:alice"], owner: "alice", updatedAt: 1)
        var sandbox = Installation(
            id: "s", platform: .apns, handle: "hs", tags: ["username:alice"], owner: "alice", updatedAt: 1, apnsEnvironment: .sandbox)
        #expect(production.apnsEnvironment == .production)
        #expect(try await store.save(production, limits: RegistrationLimits()) == .created)
        #expect(try await store.save(sandbox, limits: RegistrationLimits()) == .created)
        #expect(try await store.installations(ids: ["p", "s"]).map(\.apnsEnvironment) == [.production, .sandbox])
        #expect(try await store.installation(id: "s")?.apnsEnvironment == .sandbox)
        sandbox.apnsEnvironment = .production
        #expect(try await store.save(sandbox, limits: RegistrationLimits()) == .updated)
        #expect(try await store.installations(owner: "alice").map(\.apnsEnvironment) == [.production, .production])
    }
}
