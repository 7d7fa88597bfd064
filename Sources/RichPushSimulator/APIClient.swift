import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RichPushCore

/// The few calls a device makes to the backend, with Basic auth, over AsyncHTTPClient: pooled
/// keep-alive connections on NIO's event loops (URLSession on Linux capped the background
/// fetches of a load test near 1,200 per second).
struct APIClient: Sendable {
    let base: URL
    let authorization: String

    init(base: URL, user: String, password: String) {
        self.base = base
        self.authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// One client for the process, never shut down (as `HTTPClient.shared`, with room for the
    /// many concurrent fetches of thousands of simulated devices).
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Largest response body a device accepts (the API's own payload limit is lower).
    static let maxBody = 64 << 20

    /// One request; `timeout` bounds the whole of it (at most 30 s). `authorized`: with the
    /// user's credentials (a signed media URL needs none, and an extension has none).
    func call(
        _ method: String, _ path: String, json: [String: Any]? = nil, timeout: Duration = .seconds(30), authorized: Bool = true
    ) async throws -> (status: Int, body: Data, contentType: String?) {
        guard let url = URL(string: path, relativeTo: base) else { throw SimulatorError("not a URL: \(path.prefix(200))") }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        if authorized { request.headers.add(name: "Authorization", value: authorization) }
        if let json {
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let (seconds, attoseconds) = min(timeout, .seconds(30)).components
        let response = try await Self.http.execute(
            request, timeout: .nanoseconds(max(1_000_000, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
        let body = try await response.body.collect(upTo: Self.maxBody)
        return (Int(response.status.code), Data(buffer: body), response.headers.first(name: "Content-Type"))
    }

    /// The seed's registration: POST /api/register?handle=H, then PUT /api/register/{id}. A web
    /// device sends its subscription as `PushSubscription.toJSON()` gives it (the endpoint is
    /// its handle) instead of `Handle`.
    func register(
        handle: String, platform: Platform = .apns, tags: [String] = [], subscription: [String: Any]? = nil
    ) async throws -> String {
        // An endpoint is a URL: its `:`, `/`, `?` must not end or split the query.
        let query = handle.addingPercentEncoding(withAllowedCharacters: Self.queryValue) ?? handle
        let (status, body, _) = try await call("POST", "/api/register?handle=\(query)")
        guard status == 200, let id = try? JSONDecoder().decode(String.self, from: body) else {
            throw SimulatorError("registration failed: HTTP \(status) \(String(decoding: body, as: UTF8.self))")
        }
        var registration: [String: Any] = ["Platform": platform.rawValue, "Tags": tags]
        if let subscription { registration["Subscription"] = subscription } else { registration["Handle"] = handle }
        let (putStatus, putBody, _) = try await call("PUT", "/api/register/\(id)", json: registration)
        guard putStatus == 200 else {
            throw SimulatorError("registration failed: HTTP \(putStatus) \(String(decoding: putBody, as: UTF8.self))")
        }
        return id
    }

    /// A registration's new subscription under its installation id: PUT /api/register/{id}, as a
    /// browser's service worker sends it after `pushsubscriptionchange`. False when the backend
    /// has no such registration (404: it was removed).
    @discardableResult
    func reregister(installation id: String, platform: Platform, tags: [String], subscription: [String: Any]) async throws -> Bool {
        let registration: [String: Any] = ["Platform": platform.rawValue, "Tags": tags, "Subscription": subscription]
        let (status, body, _) = try await call("PUT", "/api/register/\(id)", json: registration)
        if status == 404 { return false }
        guard status == 200 else { throw SimulatorError("registration failed: HTTP \(status) \(String(decoding: body, as: UTF8.self))") }
        return true
    }

    /// What device `installation` missed after notification `after`
    /// (`GET /api/notifications/missed`): each notification's rich keys, oldest first, and the
    /// cursor of the next call.
    func missed(installation: String, after: Int) async throws -> (keys: [ReceivedPush.RichKeys], cursor: Int) {
        let query = installation.addingPercentEncoding(withAllowedCharacters: Self.queryValue) ?? installation
        let (status, body, _) = try await call("GET", "/api/notifications/missed?installation=\(query)&after=\(after)&limit=100")
        guard status == 200, let page = JSONValue.parse(Array(body)), case .array(let items)? = page["notifications"],
            let cursor = page["cursor"]?.string.flatMap(Int.init)
        else {
            throw SimulatorError("catch-up failed: HTTP \(status) \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        return (
            items.compactMap { item in
                // The listing names the fields as the push does, but `id` for `richId` and `message`.
                .object(["richId": item["id"] ?? .null, "richType": item["richType"] ?? .null, "richMessage": item["message"] ?? .null])
            }.compactMap(ReceivedPush.RichKeys.init), cursor
        )
    }

    /// Characters a query value keeps as they are (RFC 3986 unreserved).
    private static let queryValue = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

package struct SimulatorError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
