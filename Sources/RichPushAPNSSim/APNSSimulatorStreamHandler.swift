import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import RichPushAPNS
import RichPushCore
import Synchronization

/// Per connection of the simulator: whether the stream limit is raised, the highest stream seen
/// (a GOAWAY's last stream id), and answers given (for `--goaway-every`).
final class APNSSimulatorConnection: Sendable {
    let raised = Atomic<Bool>(false)
    let highestStreamID = Atomic<Int>(0)
    let answered = Atomic<Int>(0)
    let goingAway = Atomic<Bool>(false)
}

/// One request on one stream of the simulator, read as raw HTTP/2 frames so the HPACK
/// representation of each header is visible.
final class APNSSimulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// What every stream of a server shares.
    struct Shared: Sendable {
        let rules: APNSServerRules
        let maxStreams: Int
        let faults: APNSFaultPlan
        let random: SimulationRandom
        let log: APNSSimulatorServer.RequestLog?
        /// Each log line carries the request's payload as text (tests that check what was sent).
        var logPayloads = false
        let forward: APNSSimulatorServer.Forward?
    }

    private let shared: Shared
    private let connection: APNSSimulatorConnection
    private var headers: HPACKHeaders?
    private var body: [UInt8] = []
    private static let maxBody = 64 * 1024

    init(shared: Shared, connection: APNSSimulatorConnection) {
        self.shared = shared
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil {
                headers = frame.headers
                if let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
                    connection.highestStreamID.max(Int(id), ordering: .relaxed)
                }
            }
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            // Apple refuses more than 4 KiB anyway; past 64 KiB stop collecting.
            if case .byteBuffer(let bytes) = frame.data, body.count < Self.maxBody {
                body += bytes.readableBytesView.prefix(Self.maxBody - body.count)
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard let headers else { return }
        self.headers = nil
        let path = headers.first(name: ":path") ?? ""
        let request = APNSIncomingRequest(
            method: headers.first(name: ":method") ?? "", path: path,
            headers: headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) }, body: body)
        // Apple asks for :path and authorization as literals without indexing: say when they were not.
        let indexed = headers.filter { ($0.name == ":path" || $0.name == "authorization") && $0.indexable == .indexable }.map(\.name)
        var answer: Answer
        switch shared.rules.verdict(request) {
        case .accepted(let apnsID):
            let token = path.dropFirst("/3/device/".count)
            if !connection.raised.exchange(true, ordering: .relaxed) {
                // A valid provider token on this connection (whatever the device's fate): more streams from now on.
                setStreamLimit(shared.maxStreams, context: context)
            }
            if let left = shared.faults.outage?.refusal(now: Date().timeIntervalSince1970) {
                answer = Answer.refusal(status: 429, reason: .tooManyRequests, apnsID: apnsID, injected: true, unregisteredAt: nil)
                answer.retryAfter = left
            } else if let failure = shared.faults.failure(for: token, draw: shared.random.next()) {
                answer = Answer.refusal(
                    status: failure.status, reason: failure.reason, apnsID: apnsID, injected: true,
                    unregisteredAt: shared.faults.unregisteredAt)
            } else {
                answer = Answer(status: 200, apnsID: apnsID)
                if let forward = shared.forward {
                    var fields: [String: String] = [:]
                    for (name, value) in request.headers where name != "authorization" { fields[name] = value }
                    forward(APNSSimulatorServer.AcceptedPush(deviceToken: String(token), headers: fields, payload: body, apnsID: apnsID))
                }
            }
        case .refused(let status, let reason):
            answer = Answer.refusal(
                status: status, reason: reason, apnsID: headers.first(name: "apns-id") ?? UUID().uuidString.lowercased(),
                injected: false, unregisteredAt: nil)
            if connection.raised.exchange(false, ordering: .relaxed) {
                // As Apple has been seen to do: back to one stream after a refused push.
                setStreamLimit(1, context: context)
            }
        }
        body = []
        shared.log?(Self.logLine(request: request, answer: answer, indexed: indexed, payload: shared.logPayloads))
        if let delay = shared.faults.delayMilliseconds {
            let milliseconds = shared.random.next(in: delay)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(milliseconds))) { [answer] in
                self.send(answer, context: context)
            }
        } else {
            send(answer, context: context)
        }
    }

    private func send(_ answer: Answer, context: ChannelHandlerContext) {
        var fields = HPACKHeaders()
        fields.add(name: ":status", value: String(answer.status))
        fields.add(name: "apns-id", value: answer.apnsID)
        if let retryAfter = answer.retryAfter { fields.add(name: "retry-after", value: String(retryAfter)) }
        if !answer.body.isEmpty { fields.add(name: "content-type", value: "application/json") }
        fields.add(name: "content-length", value: String(answer.body.count))
        if answer.body.isEmpty {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: fields, endStream: true))), promise: nil)
        } else {
            context.write(wrapOutboundOut(.headers(.init(headers: fields))), promise: nil)
            context.writeAndFlush(
                wrapOutboundOut(.data(.init(data: .byteBuffer(context.channel.allocator.buffer(bytes: answer.body)), endStream: true))),
                promise: nil)
        }
        let count = connection.answered.add(1, ordering: .relaxed).newValue
        if let every = shared.faults.goAwayEvery, count % every == 0, !connection.goingAway.exchange(true, ordering: .relaxed),
            let parent = context.channel.parent
        {
            // Streams up to the highest one seen are answered; later ones are refused, and the
            // connection closes a second later, as Apple's do.
            let last = HTTP2StreamID(connection.highestStreamID.load(ordering: .relaxed))
            parent.writeAndFlush(
                HTTP2Frame(
                    streamID: .rootStream,
                    payload: .goAway(
                        lastStreamID: last, errorCode: .noError,
                        opaqueData: parent.allocator.buffer(string: #"{"reason":"Shutdown"}"#))),
                promise: nil)
            parent.eventLoop.scheduleTask(in: .seconds(1)) { parent.close(promise: nil) }
        }
    }

    private func setStreamLimit(_ limit: Int, context: ChannelHandlerContext) {
        guard let parent = context.channel.parent else { return }
        parent.writeAndFlush(
            HTTP2Frame(
                streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: limit)]))),
            promise: nil)
    }

    struct Answer: Sendable {
        var status: Int
        var apnsID: String
        var reason: APNSReason?
        var body: [UInt8] = []
        var injected = false
        /// Seconds for a `Retry-After` header (the outage fault only: Apple documents none).
        var retryAfter: Int?

        static func refusal(status: Int, reason: APNSReason, apnsID: String, injected: Bool, unregisteredAt: Int64?) -> Answer {
            var text = #"{"reason":"\#(reason.rawValue)""#
            if status == 410 { text += #","timestamp":\#(unregisteredAt ?? Int64(Date().timeIntervalSince1970 * 1000))"# }
            return Answer(status: status, apnsID: apnsID, reason: reason, body: Array((text + "}").utf8), injected: injected)
        }
    }

    static func logLine(request: APNSIncomingRequest, answer: Answer, indexed: [String], payload: Bool = false) -> String {
        func header(_ name: String) -> Any { request.headers.first { $0.name == name }?.value ?? NSNull() }
        // Which provider token, without the token: the first 8 bytes of its SHA-256, in hex.
        let token = request.headers.first { $0.name == "authorization" }.map {
            Hex.encode(Array(SHA256.hash(data: Data($0.value.utf8)).prefix(8)))
        }
        var object: [String: Any] = [
            "method": request.method, "path": request.path, "status": answer.status, "token": token ?? NSNull(),
            "reason": answer.reason?.rawValue ?? NSNull(), "apnsID": answer.apnsID,
            "pushType": header("apns-push-type"), "topic": header("apns-topic"), "bytes": request.body.count,
            "indexed": indexed, "injected": answer.injected, "at": Date().timeIntervalSince1970,
        ]
        if payload {
            object["payload"] = String(decoding: request.body, as: UTF8.self)
            object["device"] = request.path.split(separator: "/").last.map(String.init) ?? NSNull()
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
