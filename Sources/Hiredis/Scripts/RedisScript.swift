/// A Lua script run by `EVALSHA`, loaded into Redis on first use and again after `NOSCRIPT`.
///
/// The SHA-1 is computed here, so the common case is one `EVALSHA` round trip; after a Redis
/// restart or `SCRIPT FLUSH`, the `NOSCRIPT` reply triggers one `SCRIPT LOAD` + `EVALSHA` pipeline.
public struct RedisScript: Sendable, Hashable {
    public let source: String
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        self.sha1 = SHA1.hexDigest(of: Array(source.utf8))
    }

    /// The `EVALSHA` command for these keys and arguments.
    public func command(keys: [any RedisArgument], arguments: [any RedisArgument]) -> RedisCommand {
        var command = RedisCommand("EVALSHA", sha1, keys.count)
        command.append(contentsOf: keys)
        command.append(contentsOf: arguments)
        return command
    }
}

extension RedisClient {
    /// Runs the script; an error reply (from the script or Redis) is thrown.
    @discardableResult
    public func run(_ script: RedisScript, keys: [any RedisArgument] = [], arguments: [any RedisArgument] = []) async throws -> RedisValue {
        try await run(script, calls: [(keys, arguments)])[0].throwingError()
    }

    /// Runs the script once per call in one pipeline; replies in order, error replies as values.
    /// Calls that met `NOSCRIPT` are sent again after one `SCRIPT LOAD`, in the same round trip.
    public func run(_ script: RedisScript, calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])]) async throws -> [RedisValue] {
        let commands = calls.map { script.command(keys: $0.keys, arguments: $0.arguments) }
        var replies = try await pipeline(commands)
        let missing = replies.indices.filter { replies[$0].errorMessage?.hasPrefix("NOSCRIPT") == true }
        guard !missing.isEmpty else { return replies }
        let retried = try await pipeline([RedisCommand("SCRIPT", "LOAD", script.source)] + missing.map { commands[$0] })
        try retried[0].throwingError()
        for (index, reply) in zip(missing, retried.dropFirst()) { replies[index] = reply }
        return replies
    }
}
