import Foundation
import Hummingbird
import RichPushCore
import RichPushNH

/// Who may do what on a hub: the request's `SharedAccessSignature` checked against the rules of
/// the app its path names (`/{hub}/…`), as Notification Hubs checks it.
struct NHHubAccess: Sendable {
    /// An app's rules (none for an app that does not exist or has none).
    let rules: @Sendable (AppID) async throws -> [NHAccessRule]
    /// Seconds since 1970, for a token's expiry.
    var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    /// The app named by the path and the rule whose key signed the request, or NH's refusal: an
    /// unknown hub is refused as a wrong key is (its rules are none), so nothing tells hubs apart.
    func authorize(_ request: Request, context: APIRequestContext, needs right: NHRight) async throws -> (AppID, NHAccessRule) {
        let hub = context.parameters.get("hub") ?? ""
        let app = try? AppID(hub)
        var rules: [NHAccessRule] = []
        if let app { rules = try await self.rules(app) }
        let rule = try NHAuthorizer.authorize(
            header: request.headers[.authorization], host: request.head.authority ?? "", path: request.uri.path, rules: rules,
            needs: right, now: now())
        guard let app else { throw NHError.invalidSignature }
        return (app, rule)
    }
}
