import NIOCore
import NIOPosix
import PlatformSimTestSupport
import RedisTestSupport
import RichPushHTTP2
import Synchronization
import Testing

/// A request that times out on a connection that has said nothing since it began: the client asks
/// with a PING (RFC 9113 §6.7) whether the connection is dead or the server slow. A server that
/// answers it keeps its connection (`APNSClientTests.aSlowAnswerTimesOutWithoutClosingTheConnection`);
/// one that does not is closed and replaced.
@Suite("HTTP/2 liveness")
struct HTTP2LivenessTests {
    @Test func aConnectionThatAnswersNoPingIsClosedAndReplaced() async throws {
        let server = try await MuteHTTP2Server.start()
        let client = try HTTP2Client(
            configuration: HTTP2Client.Configuration(
                endpoint: HTTP2Client.Endpoint(host: "127.0.0.1", port: server.port, usesTLS: false),
                connections: 1, requestTimeout: .seconds(1), connectTimeout: .seconds(20), minReconnectDelay: .milliseconds(10),
                pingTimeout: .seconds(1)))
        let first = await client.send(try LocalAPNS.request(token: LocalAPNS.token(1)), bearer: "x")
        #expect(first == .timedOut)
        // The client PINGs, hears nothing, and closes: the server sees the PING, then the end.
        let ended = await server.firstConnectionEnded(within: .seconds(60))
        #expect(ended)
        #expect(client.livenessProbes.unanswered == 1 && client.livenessProbes.answered == 0)
        let frames = server.framesOfFirstConnection
        #expect(frames.contains(.ping), "\(frames)")
        #expect(frames.firstIndex(of: .ping).map { $0 > (frames.firstIndex(of: .headers) ?? .max) } == true, "\(frames)")
        // The next push goes on a new connection (which the mute server lets time out too).
        _ = await client.send(try LocalAPNS.request(token: LocalAPNS.token(2)), bearer: "x")
        #expect(client.connectionsOpened == 2)
        client.shutdown()
        try await server.stop()
    }

    @Test func aConnectionThatAnswersPingsIsKeptThoughRequestsTimeOut() async throws {
        // Never answers a request but answers every PING: a slow provider, not a dead connection.
        let server = try await MuteHTTP2Server.start(answersPings: true)
        // A probe waits 10 s for its answer: a stall of the machine shorter than that cannot
        // close the connection here (the answer is read before the probe's timer is run).
        let client = try HTTP2Client(
            configuration: HTTP2Client.Configuration(
                endpoint: HTTP2Client.Endpoint(host: "127.0.0.1", port: server.port, usesTLS: false),
                connections: 1, requestTimeout: .seconds(1), connectTimeout: .seconds(20), minReconnectDelay: .milliseconds(10),
                pingTimeout: .seconds(10)))
        // Each request began after the last thing the server said, so each timeout asks (one
        // probe at a time: those while one is in flight wait on it).
        for token in 1...2 {
            let exchange = await client.send(try LocalAPNS.request(token: LocalAPNS.token(token)), bearer: "x")
            #expect(exchange == .timedOut)
        }
        try await waitUntil(timeout: .seconds(60), "the probe to be decided") {
            client.livenessProbes.answered >= 1 || client.livenessProbes.unanswered > 0
        }
        #expect(client.livenessProbes.unanswered == 0)
        // Still the one connection: the next request goes on it.
        #expect(await client.send(try LocalAPNS.request(token: LocalAPNS.token(3)), bearer: "x") == .timedOut)
        #expect(client.connectionsOpened == 1)
        #expect(server.framesOfFirstConnection.contains(.ping))
        #expect(!server.firstConnectionHasEnded)
        client.shutdown()
        try await server.stop()
    }
}

/// An HTTP/2 server in cleartext that sends its SETTINGS and then nothing at all: no SETTINGS
/// ACK, no answer, no PING ACK, as a connection whose peer vanished behind a middlebox. It notes
/// the type of every frame of its first connection and when that connection ends.
final class MuteHTTP2Server: Sendable {
    enum Frame: Equatable, Sendable {
        case data, headers, rstStream, settings, ping, goAway, windowUpdate, other(UInt8)
        init(type: UInt8) {
            switch type {
            case 0: self = .data
            case 1: self = .headers
            case 3: self = .rstStream
            case 4: self = .settings
            case 6: self = .ping
            case 7: self = .goAway
            case 8: self = .windowUpdate
            default: self = .other(type)
            }
        }
    }

    private let channel: any Channel
    private let state = Mutex<(connections: Int, frames: [Frame], ended: Bool)>((connections: 0, frames: [], ended: false))
    private let endings: AsyncStream<Void>
    private let ending: AsyncStream<Void>.Continuation

    var port: Int { channel.localAddress?.port ?? 0 }
    var framesOfFirstConnection: [Frame] { state.withLock { $0.frames } }
    var firstConnectionHasEnded: Bool { state.withLock { $0.ended } }
    /// Whether it answers a PING (with its ACK), the one thing it does besides its SETTINGS.
    let answersPings: Bool

    private init(channel: any Channel, answersPings: Bool, endings: AsyncStream<Void>, ending: AsyncStream<Void>.Continuation) {
        self.channel = channel
        self.answersPings = answersPings
        self.endings = endings
        self.ending = ending
    }

    static func start(answersPings: Bool = false) async throws -> MuteHTTP2Server {
        let (endings, ending) = AsyncStream.makeStream(of: Void.self)
        let box = Mutex<MuteHTTP2Server?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    let server = box.withLock { $0 }
                    try child.pipeline.syncOperations.addHandler(Handler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = MuteHTTP2Server(channel: channel, answersPings: answersPings, endings: endings, ending: ending)
        box.withLock { $0 = server }
        return server
    }

    /// Whether the first connection ended (the client closed it) within `limit`.
    func firstConnectionEnded(within limit: Duration) async -> Bool {
        if state.withLock({ $0.ended }) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in self.endings { return true }; return false
            }
            group.addTask {
                try? await Task.sleep(for: limit); return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            ending.finish()
            return first || state.withLock { $0.ended }
        }
    }

    func stop() async throws {
        ending.finish()
        try await channel.close()
    }

    fileprivate func opened() -> Int {
        state.withLock {
            $0.connections += 1; return $0.connections
        }
    }

    fileprivate func noted(_ frame: Frame, connection: Int) {
        guard connection == 1 else { return }
        state.withLock { $0.frames.append(frame) }
    }

    fileprivate func ended(connection: Int) {
        guard connection == 1 else { return }
        state.withLock { $0.ended = true }
        ending.yield()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let server: MuteHTTP2Server?
        var connection = 0
        var buffer = ByteBuffer()
        var prefaceRead = false

        init(server: MuteHTTP2Server?) { self.server = server }

        func channelActive(context: ChannelHandlerContext) {
            connection = server?.opened() ?? 0
            // The server's connection preface: an empty SETTINGS frame (RFC 9113 §3.4).
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: [0, 0, 0, 4, 0, 0, 0, 0, 0])), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            buffer.writeBuffer(&bytes)
            if !prefaceRead {
                guard buffer.readableBytes >= 24 else { return }
                buffer.moveReaderIndex(forwardBy: 24)
                prefaceRead = true
            }
            while buffer.readableBytes >= 9, let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self).map({ Int($0 >> 8) }),
                buffer.readableBytes >= 9 + length, let type = buffer.getInteger(at: buffer.readerIndex + 3, as: UInt8.self),
                let flags = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self)
            {
                server?.noted(Frame(type: type), connection: connection)
                if type == 6, flags & 1 == 0, length == 8, server?.answersPings == true,
                    let opaque = buffer.getSlice(at: buffer.readerIndex + 9, length: 8)
                {
                    // PING with the ACK flag and the same 8 bytes (RFC 9113 §6.7).
                    var ack = ByteBuffer(bytes: [0, 0, 8, 6, 1, 0, 0, 0, 0])
                    ack.writeImmutableBuffer(opaque)
                    context.writeAndFlush(NIOAny(ack), promise: nil)
                }
                buffer.moveReaderIndex(forwardBy: 9 + length)
            }
            buffer.discardReadBytes()
        }

        func channelInactive(context: ChannelHandlerContext) {
            server?.ended(connection: connection)
            context.fireChannelInactive()
        }
    }
}
