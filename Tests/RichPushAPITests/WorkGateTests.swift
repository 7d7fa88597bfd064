import Synchronization
import Testing

@testable import RichPushAPI

/// Work of one kind bounded: `concurrency` run, `queueLimit` wait in order, one more is a 503.
@Suite("Work gate")
struct WorkGateTests {
    /// A gate opened from the test: work that holds its slot until told to finish.
    final class Latch: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let entered = Mutex(false)

        func hold() async {
            await withCheckedContinuation { continuation in
                self.continuation.withLock { $0 = continuation }
                entered.withLock { $0 = true }
            }
        }

        var isHeld: Bool { entered.withLock { $0 } }

        func open() { continuation.withLock { $0 }?.resume() }
    }

    /// What ran, in order.
    final class Order: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ item: String) { list.withLock { $0.append(item) } }
        var items: [String] { list.withLock { $0 } }
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func oneRunsOneWaitsAndTheNextIsRefusedWithRetryAfter() async throws {
        let gate = WorkGate(concurrency: 1, queueLimit: 1, busy: "too many things")
        let latch = Latch()
        let order = Order()
        let first = Task {
            try await gate.run { @Sendable in
                await latch.hold(); order.append("first")
            }
        }
        try await Self.waitUntil { latch.isHeld }
        let second = Task { try await gate.run { @Sendable in order.append("second") } }
        // The second waits (the queue holds one); a third is refused at once.
        try await Self.waitUntil { gate.waitingCount == 1 }
        #expect(order.items.isEmpty)
        do {
            try await gate.run { () -> Void in Issue.record("a third ran while one ran and one waited") }
        } catch let error as APIError {
            #expect(error.status == .serviceUnavailable)
            #expect(error.message.contains("too many things"))
            #expect(error.headers[.retryAfter] == "1")
        }
        latch.open()
        try await first.value
        try await second.value
        #expect(order.items == ["first", "second"])
        // Free again: the next runs at once.
        #expect(try await gate.run { 42 } == 42)
    }
}
