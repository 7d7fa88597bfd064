public import Hummingbird
import NIOCore
public import RichPushCore

/// The request context of every route: Hummingbird's core storage, the caller once
/// authenticated, and the peer address that brute-force counting keys on.
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``BasicAuthMiddleware`` on every `/api` route.
    public var user: User?
    public let remoteAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The authenticated caller; the auth middleware guarantees it on `/api` routes.
    func caller() throws -> User {
        guard let user else { throw APIError.unauthorized("authentication required") }
        return user
    }
}
