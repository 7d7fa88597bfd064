/// One connection that many tasks share, whichever transport carries it (a thread of its own,
/// ``RedisConnection``, or a SwiftNIO channel, ``NIORedisConnection``): what a pool balances over.
package protocol RedisSharedConnection: RedisClient, TaskExecutor {
    /// Commands queued or in flight.
    var outstandingCommandCount: Int { get }
    /// Whether the last attempt to connect failed, so that requests fail fast for now.
    var isBackingOff: Bool { get }
    /// Fails queued requests with ``RedisError/Code/closed`` and closes the socket once the
    /// requests in flight are answered, or at once when `interrupt` is true.
    func close(interrupt: Bool) async
}

extension RedisSharedConnection {
    /// This connection once Redis answered `PING` on it (a bad URL, password or host fails here
    /// rather than on first use); closed when it did not.
    func pinged() async throws -> Self {
        do {
            _ = try await send(RedisCommand("PING"))
        } catch {
            await close(interrupt: false)
            throw error
        }
        return self
    }
}

extension RedisConnection: RedisSharedConnection {}
extension NIORedisConnection: RedisSharedConnection {}

extension Array where Element: RedisSharedConnection {
    /// The connection with the fewest commands waiting, scanning from `start` so that idle
    /// connections share the load evenly. A connection in reconnect back-off fails fast: after
    /// Redis comes back, requests go to the connections that already reconnected instead.
    /// `preferred` connections (the caller's own event loop) win while not far busier.
    func leastLoaded(start: Int, preferred: ((Element) -> Bool)? = nil) -> Element {
        var best = self[start]
        var bestLoad = Int.max
        for offset in 0..<count {
            let candidate = self[(start + offset) % count]
            guard !candidate.isBackingOff else { continue }
            let load = candidate.outstandingCommandCount
            if let preferred, load <= Self.preferredLoadLimit, preferred(candidate) { return candidate }
            if load < bestLoad {
                best = candidate
                bestLoad = load
                if load == 0 && preferred == nil { break }
            }
        }
        // When all of them back off, `best` is the first: it answers at once with why.
        return best
    }

    /// Commands waiting on the caller's own connection before another one is better.
    private static var preferredLoadLimit: Int { 64 }
}
