import HTTPTypes
import Hummingbird

/// Names the client of each request in ``APIRequestContext/clientAddress`` (what the login
/// throttle keys on): the peer, or, when the peer is a trusted proxy, the address its
/// `X-Forwarded-For` gives (``TrustedProxies``).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !proxies.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = proxies.client(peer: context.peerAddress, forwardedFor: request.headers[values: Self.forwardedFor])
        // The proxy nearest us wrote the last value; only a trusted one is believed.
        if let peer = IPAddress(context.peerAddress), proxies.trusts(peer),
            let proto = request.headers[values: Self.forwardedProto].flatMap({ $0.split(separator: ",") }).last
        {
            context.forwardedHTTPS = proto.trimmingOptionalWhitespace.lowercased() == "https"
        }
        return try await next(request, context)
    }
}
