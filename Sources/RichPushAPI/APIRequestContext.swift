package import Hummingbird
import NIOCore
package import RichPushCore

/// The request context of every route: Hummingbird's core storage, the caller once
/// authenticated (and the API key they used, if any), and the client address that the login
/// throttle keys on.
package struct APIRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// Set by ``AuthMiddleware`` on every `/api` route.
    package var user: User?
    /// The app the caller acts in (set by ``AuthMiddleware``): the routes run on its stores.
    package var app: AppID = .default
    /// The key of a Bearer caller; nil for Basic, which may call every route its role allows.
    package var apiKey: APIKey?
    /// On the operator's routes, when the caller is not the operator but an admin's key with the
    /// `manage` scope: the one app it may read and change.
    package var managedApp: String?
    /// The address of the connection's other end (a load balancer's, behind one).
    package let peerAddress: String
    /// The client's address: the peer's, or the one `X-Forwarded-For` gives when the peer is a
    /// trusted proxy (set by ``ClientAddressMiddleware``).
    package var clientAddress: String
    /// Whether the request came over TLS, as a trusted proxy's `X-Forwarded-Proto` says (set by
    /// ``ClientAddressMiddleware``): the console's cookie is `Secure` then.
    package var forwardedHTTPS = false

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        clientAddress = peerAddress
    }

    /// The authenticated caller, if their credential covers `scope` (403 otherwise).
    func caller(_ scope: APIKey.Scope) throws -> User {
        guard let user else { throw APIError.unauthorized("authentication required") }
        if let apiKey, !apiKey.allows(scope) {
            throw APIError(
                .forbidden, code: "insufficient_scope",
                message:
                    "this API key has scopes \(apiKey.scopes.sorted().map(\.rawValue).joined(separator: ",")); the route needs \(scope.rawValue)",
                headers: [.wwwAuthenticate: "Bearer realm=\"RichPush\", error=\"insufficient_scope\", scope=\"\(scope.rawValue)\""])
        }
        return user
    }
}
