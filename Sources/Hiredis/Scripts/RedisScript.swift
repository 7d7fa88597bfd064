import Crypto

/// A Lua script run by `EVALSHA`, loaded into Redis on first use and again after `NOSCRIPT`.
///
/// The SHA-1 is computed here, so the common case is one `EVALSHA` round trip; after a Redis
/// restart or `SCRIPT FLUSH`, the `NOSCRIPT` reply triggers one `SCRIPT LOAD` + `EVALSHA` pipeline.
package struct RedisScript: Sendable, Hashable {
    package let source: String
    package let sha1: String

    package init(_ source: String) {
        self.source = source
        // SHA-1 only names the script, as Redis does; nothing secret depends on it.
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// The `EVALSHA` command for these keys and arguments.
    package func command(keys: [any RedisArgument], arguments: [any RedisArgument]) -> RedisCommand {
        var command = RedisCommand("EVALSHA", sha1, keys.count)
        command.append(contentsOf: keys)
        command.append(contentsOf: arguments)
        return command
    }
}

extension RedisClient {
    /// Runs the script; an error reply (from the script or Redis) is thrown.
    @discardableResult
    package func run(_ script: RedisScript, keys: [any RedisArgument] = [], arguments: [any RedisArgument] = []) async throws -> RedisValue
    {
        try await run(script, calls: [(keys, arguments)])[0].throwingError()
    }

    /// Runs the script once per call in one pipeline; replies in order, error replies as values.
    package func run(
        _ script: RedisScript, calls: [(keys: [any RedisArgument], arguments: [any RedisArgument])]
    ) async throws -> [RedisValue] {
        try await pipeline(calls.map { script.command(keys: $0.keys, arguments: $0.arguments) }, loading: [script])
    }

    /// Sends a pipeline that may hold `EVALSHA`s of `scripts`; commands that met `NOSCRIPT` are sent
    /// again after one `SCRIPT LOAD` of each script, in a second round trip.
    package func pipeline(_ commands: [RedisCommand], loading scripts: [RedisScript]) async throws -> [RedisValue] {
        var replies = try await pipeline(commands)
        let missing = replies.indices.filter { replies[$0].errorMessage?.hasPrefix("NOSCRIPT") == true }
        guard !missing.isEmpty else { return replies }
        let loads = scripts.map { RedisCommand("SCRIPT", "LOAD", $0.source) }
        let retried = try await pipeline(loads + missing.map { commands[$0] })
        for load in retried.prefix(loads.count) { try load.throwingError() }
        for (index, reply) in zip(missing, retried.dropFirst(loads.count)) { replies[index] = reply }
        return replies
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
