/// Something that runs Redis commands: one ``RedisConnection`` or a ``RedisConnectionPool``.
///
/// The queue, the API and the adapters take a `RedisClient`, so tests and production build
/// the same objects and the choice of one connection or a pool stays at the composition root.
package protocol RedisClient: Sendable {
    /// Sends the commands in one round trip and returns their replies in order.
    /// Error replies are returned as ``RedisValue/error(_:)`` values, not thrown;
    /// a connection failure throws ``RedisError``.
    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue]
    /// One Redis (a connection or a pool), or a Redis Cluster: what callers ask, rather than the
    /// client's type, where it changes what may share a script or a `WAIT` (keys of other slots).
    var topology: RedisTopology { get }
}

/// Whether a ``RedisClient`` talks to one Redis or to a cluster.
package enum RedisTopology: Sendable, Hashable {
    /// One Redis: a script may touch any key, and a `WAIT` covers every earlier write of its connection.
    case single
    /// A Redis Cluster: a script's keys share a slot, and a `WAIT` covers one node's writes.
    case cluster
}

extension RedisClient {
    package var topology: RedisTopology { .single }

    /// Checks that Redis answers `PING` (on one of a pool's connections).
    package func ping() async throws {
        let reply = try await send(RedisCommand("PING"))
        guard reply.string == "PONG" else { throw RedisError.unexpected(reply, expected: "PONG") }
    }

    /// Sends one command; an error reply is thrown as ``RedisError`` with code ``RedisError/Code/server``.
    @discardableResult
    package func send(_ command: RedisCommand) async throws -> RedisValue {
        try await pipeline([command])[0].throwingError()
    }

    /// Sends the commands in one round trip and throws the first error reply, as ``send(_:)-(RedisCommand)``
    /// does for one command. Use it wherever replies are read as data: an error read as data
    /// (`LOADING` while Redis restarts reads as an empty hash) turns a fault into a wrong answer.
    @discardableResult
    package func sendAll(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let replies = try await pipeline(commands)
        for reply in replies { try reply.throwingError() }
        return replies
    }

    /// Sends one command built from its name and arguments.
    @discardableResult
    package func send(_ name: String, _ arguments: any RedisArgument...) async throws -> RedisValue {
        try await send(RedisCommand(name, arguments: arguments))
    }

    /// Runs the commands inside MULTI…EXEC in one round trip and returns EXEC's replies.
    ///
    /// Throws if Redis refused to queue a command (the whole transaction is then discarded,
    /// `EXECABORT`); errors raised while executing stay values in the result, as Redis reports them.
    package func transaction(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let replies = try await pipeline([RedisCommand("MULTI")] + commands + [RedisCommand("EXEC")])
        for (command, reply) in zip(commands, replies.dropFirst()) {
            if let message = reply.errorMessage {
                // The server's own words first, so its prefix (OOM, READONLY, …) still classifies it.
                throw RedisError(server: "\(message) (transaction discarded: \(command.name) was refused)")
            }
        }
        let exec = try replies[replies.count - 1].throwingError()
        guard let results = exec.array else {
            throw RedisError.unexpected(exec, expected: "EXEC results (a WATCHed key changed?)")
        }
        return results
    }
}
