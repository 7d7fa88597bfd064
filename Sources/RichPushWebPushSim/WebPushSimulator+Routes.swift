import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RichPushCore

extension WebPushSimulator {
    /// `POST /subscribe`: 201 with the endpoint and the subscriber's WebSocket URL; 400 for a key
    /// that is not an uncompressed P-256 point (the Push API refuses it too).
    func subscribe(body: [UInt8]) -> Answer {
        var key: [UInt8]?
        if !body.contains(where: { ![9, 10, 13, 32].contains($0) }) {
            key = nil
        } else {
            guard case .object(let object)? = JSONValue.parse(body) else {
                return Self.answer(
                    WebPushSimError(
                        400, errno: nil, .invalidSubscribeRequest,
                        "The body must be a JSON object, {\"applicationServerKey\": \"<base64url>\"} or {}"))
            }
            if let value = object["applicationServerKey"], value != .null {
                guard case .string(let text) = value, let bytes = Base64URL.decode(text).map(Array.init), bytes.count == 65,
                    bytes.first == 4,
                    PushRequestRules.isP256Point(bytes)
                else {
                    return Self.answer(
                        WebPushSimError(
                            400, errno: nil, .invalidSubscribeRequest,
                            "applicationServerKey must be a base64url uncompressed P-256 public key (65 bytes; RFC 8292 §4.1)"))
                }
                key = bytes
            }
        }
        guard let id = store.create(applicationServerKey: key) else {
            return Self.answer(
                WebPushSimError(503, errno: 201, .storageFull, "The push service holds as many subscriptions as it can", retryAfter: 5))
        }
        let origin = origin
        let webSocket =
            origin.replacingOccurrences(of: "https://", with: "wss://").replacingOccurrences(of: "http://", with: "ws://")
            + "/subscription/\(id)/ws"
        logLine(["event": "subscribe", "subscription": id, "status": 201, "restricted": key != nil])
        let json: [String: Any] = ["endpoint": "\(origin)/push/\(id)", "subscriptionId": id, "webSocket": webSocket]
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Answer(
            status: 201,
            headers: [(name: "content-type", value: "application/json"), (name: "location", value: "\(origin)/subscription/\(id)")],
            body: Array(data))
    }
}

/// The service over HTTP/1.1 (Hummingbird): every request, read up to the largest body the
/// service takes, goes to ``WebPushSimulator/respond(_:)``, as HTTP/2's frames do. The router has
/// no routes of its own; a middleware runs for every request, matched or not.
struct SimulatorResponder<Context: RequestContext>: RouterMiddleware {
    let simulator: WebPushSimulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var tooLarge = false
        var body: [UInt8] = []
        do {
            body = Array(buffer: try await request.body.collect(upTo: PushRequestRules.maxBodyBytes))
        } catch is NIOTooManyBytesError {
            tooLarge = true
        }
        let headers = request.headers
        let answer = simulator.respond(
            WebPushSimulator.Request(
                method: request.method.rawValue, path: request.uri.path,
                header: { name in
                    HTTPField.Name(name).flatMap { headers[values: $0].isEmpty ? nil : headers[values: $0].joined(separator: ", ") }
                },
                body: body, tooLarge: tooLarge))
        if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
        var fields = HTTPFields()
        for header in answer.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return Response(status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
