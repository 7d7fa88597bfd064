import Foundation
import RichPushCore

extension WebPushSimulator {
    /// One request as either transport delivers it: HTTP/2 frames (``PushServiceHTTP2Handler``)
    /// or Hummingbird's HTTP/1.1 (``SimulatorResponder``). The body is read up to
    /// ``PushRequestRules/maxBodyBytes``; `tooLarge` says there was more.
    struct Request {
        var method: String
        var path: String
        var header: (String) -> String?
        var body: [UInt8]
        var tooLarge: Bool
    }

    /// Every route of the service, whatever the transport: `POST /push/<id>`, `POST /subscribe`,
    /// `DELETE /subscription/<id>`, `GET /subscription/<id>/ws` when it is not a WebSocket
    /// upgrade (HTTP/2 has none here), and CORS for the subscriber's side.
    func respond(_ request: Request) -> Answer {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let subscriberMethods = Self.subscriberMethods(segments)
        if subscriberMethods != nil, request.header("origin") != nil {
            if request.method == "OPTIONS", let methods = subscriberMethods, request.header("access-control-request-method") != nil {
                // The preflight (Fetch standard, CORS protocol): 204 naming what may follow.
                return Answer(
                    status: 204,
                    headers: [
                        (name: "access-control-allow-origin", value: "*"), (name: "access-control-allow-methods", value: methods),
                        (name: "access-control-allow-headers", value: "Content-Type"), (name: "access-control-max-age", value: "600"),
                        (name: "vary", value: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
                    ])
            }
            var answer = route(request, segments)
            answer.headers += [
                (name: "access-control-allow-origin", value: "*"), (name: "access-control-expose-headers", value: "Location, Retry-After"),
            ]
            return answer
        }
        return route(request, segments)
    }

    private func route(_ request: Request, _ segments: ArraySlice<Substring>) -> Answer {
        switch (request.method, segments.count, segments.first) {
        case ("POST", 2, "push"?):
            return push(subscriptionID: String(segments.last!), header: request.header, body: request.body, tooLarge: request.tooLarge)
        case ("POST", 1, "subscribe"?):
            guard !request.tooLarge else {
                return Self.answer(
                    WebPushSimError(413, errno: 104, .tooLarge, "A subscribe request is at most \(PushRequestRules.maxBodyBytes) bytes"))
            }
            return subscribe(body: request.body)
        case ("DELETE", 2, "subscription"?):
            let id = String(segments.last!)
            let found = store.expire(id)
            logLine(["event": "unsubscribe", "subscription": id, "status": found ? 204 : 404])
            return found ? Answer(status: 204) : Self.answer(WebPushSimError(404, errno: 102, .unknownSubscription, "No such subscription"))
        case ("GET", 3, "subscription"?) where segments.last == "ws":
            switch store.lookup(String(segments[segments.startIndex + 1])) {
            case .unknown: return Self.answer(WebPushSimError(404, errno: 102, .unknownSubscription, "No such subscription"))
            case .expired: return Self.answer(Self.expired)
            case .active: return Answer(status: 426, headers: [(name: "upgrade", value: "websocket")])
            }
        default:
            return Answer(status: 404)
        }
    }

    /// The methods a page may use at a path on the subscriber's side (CORS), or nil.
    static func subscriberMethods(_ segments: ArraySlice<Substring>) -> String? {
        if segments.count == 1, segments.first == "subscribe" { return "POST" }
        if segments.count == 2, segments.first == "subscription", segments.last?.isEmpty == false { return "DELETE" }
        return nil
    }

    static func answer(_ error: WebPushSimError) -> Answer {
        var headers = [(name: "content-type", value: "application/json")]
        if let retryAfter = error.retryAfter { headers.append((name: "retry-after", value: String(retryAfter))) }
        return Answer(status: error.status, headers: headers, body: error.body)
    }
}
