import Synchronization

@testable import Hiredis

/// A Redis client that holds back the calls a test names, once the test closes the gate (after
/// letting `passing` more through), until it opens it again: a bulk action stopped between two
/// batches, so a test can act while the action is known to be running.
final class GatedRedis: RedisClient {
    let base: any RedisClient
    private let isGated: @Sendable (RedisCommand) -> Bool
    private let state: Mutex<State>

    private struct State {
        var passing = Int.max
        var isOpen = false
        /// What a gated call past `passing` throws at once instead of waiting, if set.
        var failure: RedisError?
        var held: [CheckedContinuation<Void, Never>] = []
        /// Calls that reached a closed gate, held or since let through.
        var stopped = 0
    }

    /// Gates the calls for which `isGated` is true (open until ``close(after:)``).
    init(base: any RedisClient, isGated: @escaping @Sendable (RedisCommand) -> Bool) {
        self.base = base
        self.isGated = isGated
        state = Mutex(State())
    }

    /// Lets `passing` more gated calls through, then holds the rest (or fails them with `failure`).
    func close(after passing: Int, failing failure: RedisError? = nil) {
        state.withLock { state in
            state.passing = passing
            state.failure = failure
        }
    }

    /// An `EVALSHA` one of whose arguments is `key`.
    static func script(on key: String) -> @Sendable (RedisCommand) -> Bool {
        { command in
            let text = String(decoding: command.encodedArguments, as: UTF8.self)
            return text.hasPrefix("$7\r\nEVALSHA\r\n") && text.contains("\r\n\(key)\r\n")
        }
    }

    var topology: RedisTopology { base.topology }

    /// How many calls reached the closed gate.
    var stopped: Int { state.withLock { $0.stopped } }

    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for waiter in held { waiter.resume() }
    }

    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        if commands.contains(where: isGated) {
            let failure = state.withLock { state -> RedisError? in
                guard !state.isOpen, state.passing == 0, let failure = state.failure else { return nil }
                state.stopped += 1
                return failure
            }
            if let failure { throw failure }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let pass = state.withLock { state in
                    if state.isOpen { return true }
                    if state.passing > 0 {
                        state.passing -= 1
                        return true
                    }
                    state.stopped += 1
                    state.held.append(waiter)
                    return false
                }
                if pass { waiter.resume() }
            }
        }
        return try await base.pipeline(commands)
    }
}
