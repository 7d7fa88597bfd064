import Synchronization
import Testing

@testable import RichPushStorage

/// Calls made at the same time are sent together, each caller gets its own output, and nothing
/// waits once the calls stop coming.
@Suite("Coalesced calls")
struct CoalescerTests {
    /// A run whose first batch is held until `release` opens, recording every batch it is given.
    final class Recorder: Sendable {
        let batches = Mutex<[[Int]]>([])
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let held = Mutex(false)

        func run(_ inputs: [Int]) async throws -> [Result<Int, any Error>] {
            let first = held.withLock { held in
                defer { held = true }
                return !held
            }
            if first { await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } } }
            batches.withLock { $0.append(inputs) }
            return inputs.map { $0 % 7 == 3 ? .failure(Refused(input: $0)) : .success($0 * 10) }
        }

        func release() async throws {
            while true {
                if let continuation = gate.withLock({ gate in
                    defer { gate = nil }; return gate
                }) {
                    continuation.resume()
                    return
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    struct Refused: Error, Equatable { let input: Int }

    @Test func callsMadeWhileTheSlotIsBusyGoTogetherAndEachGetsItsOwnOutput() async throws {
        let coalescer = Coalescer<Int, Int>(concurrency: 1, maxBatch: 50)
        let recorder = Recorder()
        let outputs = try await withThrowingTaskGroup(of: (Int, Result<Int, Refused>).self) { group in
            group.addTask {
                (0, .success(try await coalescer.submit(0) { try await recorder.run($0) }))
            }
            // The first call holds the only slot; the others queue behind it.
            for input in 1...120 {
                group.addTask {
                    do {
                        return (input, .success(try await coalescer.submit(input) { try await recorder.run($0) }))
                    } catch let refused as Refused {
                        return (input, .failure(refused))
                    }
                }
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while coalescer.waitingCount < 120, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(coalescer.waitingCount == 120)
            try await recorder.release()
            var outputs: [Int: Result<Int, Refused>] = [:]
            for try await (input, output) in group { outputs[input] = output }
            return outputs
        }
        #expect(outputs.count == 121)
        for (input, output) in outputs {
            #expect(output == (input % 7 == 3 ? .failure(Refused(input: input)) : .success(input * 10)), "\(input)")
        }
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.flatMap { $0 }.sorted() == Array(0...120), "every call ran once")
        // The first alone, then the 120 waiting in batches of at most 50, in the order they came.
        #expect(batches.map(\.count) == [1, 50, 50, 20])
        #expect(coalescer.waitingCount == 0)
    }

    @Test func aBatchThatFailsFailsEachOfItsCallsAndTheNextStillRuns() async throws {
        let coalescer = Coalescer<Int, Int>(concurrency: 2, maxBatch: 10)
        struct Down: Error {}
        await #expect(throws: Down.self) { try await coalescer.submit(1) { _ in throw Down() } }
        #expect(try await coalescer.submit(2) { $0.map { .success($0 + 1) } } == 3)
        // A run that answers for fewer calls than it was given fails them rather than hanging.
        await #expect(throws: CoalescerError.self) { try await coalescer.submit(3) { _ in [] } }
        #expect(try await coalescer.submit(4) { $0.map { .success($0 + 1) } } == 5)
    }
}
