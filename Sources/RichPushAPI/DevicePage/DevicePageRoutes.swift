import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /device`: a browser device in a page (docs/devices.md#a-browser-device). Chromium makes
/// its keys with WebCrypto, subscribes at the push service named by `?push=`, registers as the
/// signed-in user's device, decrypts what arrives over the push service's WebSocket and fetches
/// the payload. No credentials to load it: the user signs in on the page, and the password stays
/// in the page's memory, sent only to this origin.
struct DevicePageRoutes {
    let page: [UInt8]
    let script: [UInt8]
    let style: [UInt8]

    func add(to router: Router<APIRequestContext>) {
        router.get("device") { request, _ -> Response in
            var push: PushServiceOrigin?
            if let text = request.uri.queryParameters.get("push") {
                guard let origin = PushServiceOrigin(text) else {
                    throw APIError.badRequest(
                        "push must be a push service's origin, https://host[:port] (http only for a loopback host)",
                        code: "bad_push_origin")
                }
                push = origin
            }
            return Self.response(page, contentType: "text/html; charset=utf-8", policy: Self.policy(push))
        }
        router.get("device.js") { _, _ in Self.response(script, contentType: "text/javascript; charset=utf-8", policy: Self.policy(nil)) }
        router.get("device.css") { _, _ in Self.response(style, contentType: "text/css; charset=utf-8", policy: Self.policy(nil)) }
    }

    /// Nothing but this origin's script and style, images from this origin or the page's own
    /// blobs, and connections to this origin and the one push service; no frames, forms, plugins
    /// or base URL changes.
    static func policy(_ push: PushServiceOrigin?) -> String {
        let connect = ["'self'"] + (push.map { [$0.origin, $0.webSocketOrigin] } ?? [])
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' blob:",
            "connect-src \(connect.joined(separator: " "))", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
        ]
        .joined(separator: "; ")
    }

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!

    private static func response(_ bytes: [UInt8], contentType: String, policy: String) -> Response {
        let headers: HTTPFields = [
            .contentType: contentType,
            .contentSecurityPolicy: policy,
            .xContentTypeOptions: "nosniff",
            Self.referrerPolicy: "no-referrer",
            Self.crossOriginOpenerPolicy: "same-origin",
            .crossOriginResourcePolicy: "same-origin",
            .cacheControl: "no-cache",
        ]
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
