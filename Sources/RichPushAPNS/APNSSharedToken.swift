package import Foundation
package import Hiredis
import RichPushCredentials

/// The provider token every worker of a fleet uses, kept in Redis by ``SharedToken``: whichever
/// worker needs a token first creates it under a short lock, the others read it, and it is
/// replaced after `refreshAfter` (Apple: no more often than every 20 minutes, no less than every
/// 60). So a fleet never triggers `TooManyProviderTokenUpdates` by minting a token per worker,
/// and never sends one older than an hour (`ExpiredProviderToken`).
package final class APNSSharedToken: Sendable {
    let shared: SharedToken

    package init(
        redis: any RedisClient, prefix: String, signer: APNSSigningKey, refreshAfter: Duration = .seconds(40 * 60),
        localTTL: Duration = .seconds(5)
    ) {
        shared = SharedToken(
            redis: redis, key: "\(prefix):apns:token:\(signer.teamID):\(signer.keyID)", refreshAfter: refreshAfter,
            localTTL: localTTL
        ) { now in
            SharedToken.Minted(token: try signer.token(issuedAt: now), issuedAt: now)
        }
    }

    /// The token to send now.
    package func current(now: Date = Date()) async throws -> String {
        try await shared.current(now: now)
    }

    /// Apple refused `rejected` (`ExpiredProviderToken`, `InvalidProviderToken`): replaces it in
    /// Redis unless another worker already did, and returns the token to retry with.
    package func replace(rejected: String, now: Date = Date()) async throws -> String {
        try await shared.replace(rejected: rejected, now: now)
    }
}
