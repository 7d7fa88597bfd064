import Synchronization

/// Calls made at the same time, sent together ("group commit"): up to `concurrency` batches are
/// in flight at once, and a call made while all of them are busy waits for the next batch, which
/// takes every call waiting (up to `maxBatch`). At low load each call goes alone and at once; under
/// load the calls share one round trip and one script call instead of queueing one by one.
final class Coalescer<Input: Sendable, Output: Sendable>: Sendable {
    typealias Run = @Sendable ([Input]) async throws -> [Result<Output, any Error>]

    private struct Waiter: Sendable {
        let input: Input
        let continuation: CheckedContinuation<Output, any Error>
    }

    private struct State {
        var inFlight = 0
        var waiting: [Waiter] = []
    }

    private let state = Mutex(State())
    private let concurrency: Int
    private let maxBatch: Int

    init(concurrency: Int, maxBatch: Int) {
        self.concurrency = max(1, concurrency)
        self.maxBatch = max(1, maxBatch)
    }

    /// `input`'s output, from `run` given this input alone or with others made meanwhile; every
    /// caller passes the same `run`.
    func submit(_ input: Input, run: @escaping Run) async throws -> Output {
        if state.withLock({ state in Self.takeSlot(&state, concurrency) }) {
            defer { finished(run) }
            return try Self.only(try await run([input]))
        }
        return try await withCheckedThrowingContinuation { continuation in
            let waiter = Waiter(input: input, continuation: continuation)
            let leads = state.withLock { state in
                if Self.takeSlot(&state, concurrency) { return true }
                state.waiting.append(waiter)
                return false
            }
            if leads { Task { await self.runBatch([waiter], run) } }
        }
    }

    /// Calls waiting for a batch (tests watch it).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    private static func takeSlot(_ state: inout State, _ concurrency: Int) -> Bool {
        guard state.inFlight < concurrency else { return false }
        state.inFlight += 1
        return true
    }

    private static func only(_ outputs: [Result<Output, any Error>]) throws -> Output {
        guard outputs.count == 1 else { throw CoalescerError.outputCount(outputs.count, expected: 1) }
        return try outputs[0].get()
    }

    /// A batch ended: its slot goes to the calls waiting (in a task of their own), or is freed.
    private func finished(_ run: @escaping Run) {
        let next: [Waiter] = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.inFlight -= 1
                return []
            }
            let batch = Array(state.waiting.prefix(maxBatch))
            state.waiting.removeFirst(batch.count)
            return batch
        }
        if !next.isEmpty { Task { await self.runBatch(next, run) } }
    }

    private func runBatch(_ waiters: [Waiter], _ run: @escaping Run) async {
        defer { finished(run) }
        do {
            let outputs = try await run(waiters.map(\.input))
            guard outputs.count == waiters.count else { throw CoalescerError.outputCount(outputs.count, expected: waiters.count) }
            for (waiter, output) in zip(waiters, outputs) { waiter.continuation.resume(with: output) }
        } catch {
            for waiter in waiters { waiter.continuation.resume(throwing: error) }
        }
    }
}

enum CoalescerError: Error, CustomStringConvertible {
    case outputCount(Int, expected: Int)

    var description: String {
        switch self {
        case .outputCount(let count, let expected): "a batch of \(expected) calls gave \(count) outputs"
        }
    }
}
