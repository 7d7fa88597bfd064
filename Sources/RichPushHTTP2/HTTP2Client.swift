package import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// HTTP/2 connections to one push endpoint (APNs, FCM) for one sender: POST requests in batches,
/// with one credential per batch (Apple ties a connection to the first provider token it sees,
/// so a client serves one team). Requests are spread over the connections in turn; each
/// connection carries as many streams as the server allows at the moment. A connection that
/// closes or receives GOAWAY is replaced, with back-off after failures; a request the server did
/// not process is sent again on another connection, so the client itself neither loses nor
/// duplicates a push. Run it in the process's `ServiceGroup`: it closes its connections on
/// shutdown.
package final class HTTP2Client: Service, Sendable {
    package let configuration: Configuration
    private let tls: NIOSSLContext?
    private let group: any EventLoopGroup
    private let slots: Mutex<[Slot]>
    private let cursor = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let opened = Atomic<Int>(0)
    private let resent = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let liveness: HTTP2Liveness

    enum Slot {
        case idle(failures: Int, notBefore: NIODeadline, lastError: String?)
        case connecting(Task<HTTP2Connection, any Error>, failures: Int)
        case ready(HTTP2Connection)
    }

    package init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.configuration = configuration
        self.group = group
        liveness = HTTP2Liveness(timeout: TimeAmount(configuration.pingTimeout ?? configuration.requestTimeout))
        if configuration.endpoint.usesTLS {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.applicationProtocols = ["h2"]
            tls.minimumTLSVersion = .tlsv12
            if let roots = configuration.trustRoots { tls.trustRoots = .certificates(roots) }
            self.tls = try NIOSSLContext(configuration: tls)
        } else {
            self.tls = nil
        }
        slots = Mutex(
            Array(repeating: .idle(failures: 0, notBefore: .uptimeNanoseconds(0), lastError: nil), count: configuration.connections))
    }

    /// Sends one request and returns how it ended; never throws.
    package func send(_ request: HTTP2Request, authorization: String) async -> HTTP2Exchange {
        await send([request], authorization: authorization)[0]
    }

    /// Sends the requests, spread over the connections, and returns how each ended, in order;
    /// never throws. Requests APNs did not process are sent again on another connection, up to
    /// `unprocessedRetries` times. Once `halt` trips, requests not yet sent stay `unprocessed`.
    package func send(_ requests: [HTTP2Request], authorization: String, halt: HTTP2Halt? = nil) async -> [HTTP2Exchange] {
        var exchanges = [HTTP2Exchange](repeating: .unprocessed(reason: "not sent"), count: requests.count)
        var pending = Array(requests.indices)
        let timeout = TimeAmount(configuration.requestTimeout)
        for attempt in 0...configuration.unprocessedRetries where !pending.isEmpty && !(halt?.isTripped ?? false) {
            // One share per connection, so a batch uses all of them.
            let shares = min(configuration.connections, pending.count)
            var sent: [(indices: ArraySlice<Int>, answers: EventLoopFuture<[HTTP2Exchange]>)] = []
            for share in 0..<shares {
                let indices = pending[pending.count * share / shares..<pending.count * (share + 1) / shares]
                do {
                    let connection = try await lease()
                    sent.append(
                        (
                            indices,
                            connection.execute(
                                indices.lazy.map { requests[$0] }, authorization: authorization, timeout: timeout, halt: halt)
                        ))
                } catch {
                    for index in indices { exchanges[index] = .unprocessed(reason: "\(error)") }
                }
            }
            var again: [Int] = []
            for (indices, answers) in sent {
                let results: [HTTP2Exchange]
                do {
                    results = try await answers.get()
                } catch {
                    results = Array(repeating: .failed(reason: "\(error)"), count: indices.count)
                }
                for (index, exchange) in zip(indices, results) {
                    exchanges[index] = exchange
                    if exchange.wasRefusedStream { refused.add(1, ordering: .relaxed) }
                    // Not sent again to a recipient an answer declared gone or asked to wait for.
                    if case .unprocessed = exchange, !(halt?.skips(requests[index].recipient) ?? false) { again.append(index) }
                }
            }
            if attempt < configuration.unprocessedRetries { resent.add(again.count, ordering: .relaxed) }
            pending = again
        }
        return exchanges
    }

    /// Connections opened so far (a GOAWAY or a dropped connection makes a new one).
    package var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    /// Requests sent again because the server did not process them (GOAWAY, `REFUSED_STREAM`, a
    /// connection that failed before they were written).
    package var requestsResent: Int { resent.load(ordering: .relaxed) }

    /// Streams the server refused (`REFUSED_STREAM`): a client that keeps to the server's stream
    /// limit sees none from a server that does.
    package var streamsRefused: Int { refused.load(ordering: .relaxed) }
    /// Liveness PINGs sent on connections quiet since a timed-out request began: answered (kept)
    /// and unanswered (closed).
    package var livenessProbes: (answered: Int, unanswered: Int) { (liveness.probesAnswered, liveness.probesUnanswered) }

    /// The server's stream limits seen on each open connection, newest last (for operators and tests).
    package var streamLimits: [[Int]] {
        slots.withLock { $0.compactMap { if case .ready(let connection) = $0 { connection.state.streamLimits } else { nil } } }
    }

    package func run() async throws {
        try? await gracefulShutdown()
        shutdown()
    }

    /// Closes every connection; requests in flight end as failed, new ones are refused.
    package func shutdown() {
        stopped.store(true, ordering: .relaxed)
        let closing = slots.withLock { slots in
            defer { for index in slots.indices { slots[index] = .idle(failures: 0, notBefore: .distantFuture, lastError: "shut down") } }
            return slots
        }
        for slot in closing {
            switch slot {
            case .ready(let connection): connection.close()
            case .connecting(let task, _): task.cancel()
            case .idle: break
            }
        }
    }

    private enum Lease {
        case use(HTTP2Connection)
        case wait(Task<HTTP2Connection, any Error>)
        case unavailable(String)
    }

    /// A usable connection: the one in turn if it is open; else a slot whose back-off has passed
    /// is connected (so connections are made as load arrives); else any open one; else one
    /// being made; else the reason none can be had right now.
    private func lease() async throws -> HTTP2Connection {
        guard !stopped.load(ordering: .relaxed) else { throw HTTP2ClientError("the HTTP/2 client is shut down") }
        let start = cursor.add(1, ordering: .relaxed).newValue
        let now = NIODeadline.now()
        let lease: Lease = slots.withLock { slots in
            let count = slots.count
            var open: HTTP2Connection?
            var pending: Task<HTTP2Connection, any Error>?
            var connectable: Int?
            var problem: String?
            for offset in 0..<count {
                let index = (start + offset) % count
                switch slots[index] {
                case .ready(let connection) where connection.state.isUsable:
                    if offset == 0 { return .use(connection) }
                    if open == nil { open = connection }
                case .ready(let connection):
                    // Closed or going away: requests still on it finish, then it goes.
                    retire(connection)
                    slots[index] = .idle(failures: 0, notBefore: now, lastError: nil)
                    if connectable == nil { connectable = index }
                case .connecting(let task, _):
                    if pending == nil { pending = task }
                case .idle(_, let notBefore, let lastError):
                    if notBefore <= now {
                        if connectable == nil { connectable = index }
                    } else if problem == nil {
                        problem =
                            "APNs at \(configuration.endpoint) unreachable (\(lastError ?? "?")); next attempt in \((notBefore - now).nanoseconds / 1_000_000) ms"
                    }
                }
            }
            if let index = connectable {
                let task = connect(slot: index, slots: &slots)
                return .wait(task)
            }
            if let open { return .use(open) }
            if let pending { return .wait(pending) }
            return .unavailable(problem ?? "no APNs connection")
        }
        switch lease {
        case .use(let connection): return connection
        case .wait(let task): return try await task.value
        case .unavailable(let reason): throw HTTP2ClientError(reason)
        }
    }

    private func connect(slot index: Int, slots: inout [Slot]) -> Task<HTTP2Connection, any Error> {
        let failures = if case .idle(let failures, _, _) = slots[index] { failures } else { 0 }
        let configuration = configuration
        let tls = tls
        let group = group
        let task = Task {
            do {
                let connection = try await HTTP2Connection.connect(
                    to: configuration.endpoint, tls: tls,
                    connectTimeout: TimeAmount(configuration.connectTimeout),
                    liveness: self.liveness,
                    responseIDHeader: configuration.responseIDHeader, group: group)
                self.opened.add(1, ordering: .relaxed)
                let kept = self.slots.withLock { slots in
                    guard !self.stopped.load(ordering: .relaxed) else { return false }
                    slots[index] = .ready(connection)
                    return true
                }
                if !kept { connection.close() }
                return connection
            } catch {
                let delay = Self.backOff(
                    failures: failures + 1, from: configuration.minReconnectDelay, limit: configuration.maxReconnectDelay)
                self.slots.withLock { slots in
                    guard !self.stopped.load(ordering: .relaxed) else { return }
                    slots[index] = .idle(failures: failures + 1, notBefore: .now() + delay, lastError: "\(error)")
                }
                throw error
            }
        }
        slots[index] = .connecting(task, failures: failures)
        return task
    }

    /// Lets the requests on a connection that is going away finish, then closes it.
    private func retire(_ connection: HTTP2Connection) {
        let channel = connection.channel
        channel.eventLoop.scheduleTask(in: TimeAmount(configuration.requestTimeout) + .seconds(1)) {
            channel.close(promise: nil)
        }
    }

    /// `first` doubling per failure up to `limit`, with up to 20 % jitter, so a fleet does not
    /// reconnect in step.
    static func backOff(failures: Int, from first: Duration, limit: Duration) -> TimeAmount {
        let base = min(Double(TimeAmount(limit).nanoseconds), Double(TimeAmount(first).nanoseconds) * pow2(min(failures - 1, 30)))
        return .nanoseconds(Int64(base * Double.random(in: 0.8...1.0)))
    }

    private static func pow2(_ exponent: Int) -> Double { Double(1 << max(0, exponent)) }
}
