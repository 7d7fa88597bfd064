import APITestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The console called as a script calls it, on AsyncHTTPClient: the session's cookie passed by
/// hand, and no cookie jar. URLSession's shared one on Linux kept a sign-in's `Set-Cookie` and sent
/// it to every 127.0.0.1 port (cookies ignore ports), whatever `httpShouldHandleCookies` said, so
/// two suites signed in at once could send each other's session: 401 "sign in to the console
/// first" under load (ConsoleTimelineTests, RedisACLTests, 2026-12-06/07).
enum ConsoleHTTP {
    /// `method` on `base` + `path` with `Origin` set to `base`, `Accept: application/json` and, if
    /// given, the cookie and a form body; the status, the body and the `Set-Cookie` value's
    /// `name=value`.
    static func call(
        _ base: URL, _ method: String, _ path: String, form: String? = nil, cookie: String? = nil
    ) async throws
        -> (status: Int, body: String, cookie: String?)
    {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        var request = HTTPClientRequest(url: root + (path.hasPrefix("/") ? path : "/" + path))
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Origin", value: "http://\(base.host ?? "127.0.0.1"):\(base.port ?? 80)")
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 16 << 20)
        let setCookie = response.headers.first(name: "Set-Cookie").flatMap { $0.split(separator: ";").first.map(String.init) }
        return (Int(response.status.code), String(buffer: body), setCookie)
    }
}
