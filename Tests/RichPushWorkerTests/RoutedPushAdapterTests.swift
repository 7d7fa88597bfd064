import RichPushAdapters
import RichPushCore
import RichPushInMemory
import Testing

/// Pushes split by platform: each route's outcomes in the pushes' order, and a route that cannot
/// send does not take the others' sends with it.
@Suite("Routed push adapter")
struct RoutedPushAdapterTests {
    struct Unreachable: Error {}

    static func push(_ id: String, _ platform: Platform) -> OutgoingPush {
        OutgoingPush(
            notification: 1,
            installation: Installation(id: id, platform: platform, handle: "h-\(id)", tags: [], owner: "alice", updatedAt: 0),
            rendered: RenderedPush(payload: [], pushType: "background", priority: 5, expiration: 0, collapseID: "1"))
    }

    @Test func eachPlatformGoesItsOwnWayAndOutcomesKeepTheirOrder() async throws {
        let hub = InMemoryPushAdapter { .sent(adapterID: "hub-\($0.installation.id)") }
        let fcm = InMemoryPushAdapter { .sent(adapterID: "fcm-\($0.installation.id)") }
        let routed = RoutedPushAdapter(fallback: hub, routes: [.fcm: fcm])
        let pushes = [Self.push("a", .apns), Self.push("b", .fcm), Self.push("c", .apns), Self.push("d", .fcm)]
        let outcomes = try await routed.send(pushes)
        #expect(outcomes == [.sent(adapterID: "hub-a"), .sent(adapterID: "fcm-b"), .sent(adapterID: "hub-c"), .sent(adapterID: "fcm-d")])
        #expect(hub.pushes.map(\.installation.id) == ["a", "c"] && fcm.pushes.map(\.installation.id) == ["b", "d"])
        #expect(routed.name == "memory+fcm:memory")
    }

    @Test func aRouteThatCannotSendFailsOnlyItsOwnPushes() async throws {
        let hub = InMemoryPushAdapter()
        let fcm = InMemoryPushAdapter()
        fcm.failAll(with: Unreachable())
        let routed = RoutedPushAdapter(fallback: hub, routes: [.fcm: fcm])
        let outcomes = try await routed.send([Self.push("a", .apns), Self.push("b", .fcm)])
        #expect(outcomes[0] == .sent(adapterID: "mem-a"))
        guard case .failed(_, true) = outcomes[1] else {
            Issue.record("expected a retryable failure, got \(outcomes[1])")
            return
        }
        // Every route down: the batch throws, and the job backs off as a whole.
        hub.failAll(with: Unreachable())
        await #expect(throws: Unreachable.self) { _ = try await routed.send([Self.push("a", .apns), Self.push("b", .fcm)]) }
    }
}

extension RoutedPushAdapterTests {
    /// A platform the worker has no adapter for fails at once, for good, naming the fix, and is
    /// never handed to another platform's adapter (which would refuse the token and unregister it).
    @Test func aPlatformWithoutAnAdapterFailsNamingIt() async throws {
        let apns = InMemoryPushAdapter()
        let routed = RoutedPushAdapter(fallback: UnroutedPushAdapter(configured: ["apns"]), routes: [.apns: apns])
        let outcomes = try await routed.send([Self.push("ios", .apns), Self.push("android", .fcm)])
        #expect(outcomes.first.map { if case .sent = $0 { true } else { false } } == true, "\(outcomes)")
        guard case .failed(let reason, let retryable) = outcomes.last else { Issue.record("\(outcomes)"); return }
        #expect(!retryable && reason.contains("no adapter for platform fcm") && reason.contains("--adapter"), "\(reason)")
        #expect(apns.pushes.map(\.installation.id) == ["ios"])
    }
}
