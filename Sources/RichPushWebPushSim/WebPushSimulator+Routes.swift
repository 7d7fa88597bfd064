import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import RichPushCore

extension WebPushSimulator {
    /// `POST /subscribe`, `DELETE /subscription/<id>`, `POST /push/<id>`, and the subscriber
    /// URL's answer when it is not a WebSocket upgrade.
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("subscribe") { request, _ -> Response in
            let body = Array(buffer: try await request.body.collect(upTo: 4096))
            return self.subscribe(body: body)
        }
        router.delete("subscription/:id") { _, context -> Response in
            let id = context.parameters.get("id") ?? ""
            let found = self.store.expire(id)
            self.logLine(["event": "unsubscribe", "subscription": id, "status": found ? 204 : 404])
            return found ? Response(status: .noContent)
                : Self.response(WebPushSimError(404, errno: 102, .unknownSubscription, "No such subscription"))
        }
        router.get("subscription/:id/ws") { _, context -> Response in
            switch self.store.lookup(context.parameters.get("id") ?? "") {
            case .unknown: Self.response(WebPushSimError(404, errno: 102, .unknownSubscription, "No such subscription"))
            case .expired: Self.response(Self.expired)
            case .active: Response(status: .upgradeRequired, headers: [.upgrade: "websocket"])
            }
        }
        router.post("push/:id") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            var tooLarge = false
            var body: [UInt8] = []
            do {
                body = Array(buffer: try await request.body.collect(upTo: PushRequestRules.maxBodyBytes))
            } catch is NIOTooManyBytesError {
                tooLarge = true
            }
            let headers = request.headers
            let answer = self.push(subscriptionID: id, header: { name in HTTPField.Name(name).flatMap { headers[values: $0].isEmpty ? nil : headers[values: $0].joined(separator: ", ") } },
                                   body: body, tooLarge: tooLarge)
            if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
            var fields = HTTPFields()
            for header in answer.headers { if let name = HTTPField.Name(header.name) { fields[name] = header.value } }
            return Response(status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
    }

    /// 201 with the endpoint and the subscriber's WebSocket URL; 400 for a key that is not an
    /// uncompressed P-256 point (the Push API refuses it too).
    func subscribe(body: [UInt8]) -> Response {
        var key: [UInt8]?
        if !body.contains(where: { ![9, 10, 13, 32].contains($0) }) {
            key = nil
        } else {
            guard case .object(let object)? = JSONValue.parse(body) else {
                return Self.response(WebPushSimError(400, errno: nil, .invalidSubscribeRequest, "The body must be a JSON object, {\"applicationServerKey\": \"<base64url>\"} or {}"))
            }
            if let value = object["applicationServerKey"], value != .null {
                guard case .string(let text) = value, let bytes = Base64URL.decode(text).map(Array.init), bytes.count == 65, bytes.first == 4,
                      PushRequestRules.isP256Point(bytes) else {
                    return Self.response(WebPushSimError(400, errno: nil, .invalidSubscribeRequest,
                                                         "applicationServerKey must be a base64url uncompressed P-256 public key (65 bytes; RFC 8292 §4.1)"))
                }
                key = bytes
            }
        }
        guard let id = store.create(applicationServerKey: key) else {
            return Self.response(WebPushSimError(503, errno: 201, .storageFull, "The push service holds as many subscriptions as it can", retryAfter: 5))
        }
        let origin = origin
        let webSocket = origin.replacingOccurrences(of: "https://", with: "wss://").replacingOccurrences(of: "http://", with: "ws://") + "/subscription/\(id)/ws"
        logLine(["event": "subscribe", "subscription": id, "status": 201, "restricted": key != nil])
        let json: [String: Any] = ["endpoint": "\(origin)/push/\(id)", "subscriptionId": id, "webSocket": webSocket]
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Response(status: .created, headers: [.contentType: "application/json", .location: "\(origin)/subscription/\(id)"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func response(_ error: WebPushSimError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: error.body)))
    }
}
