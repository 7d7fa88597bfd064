package import Crypto
package import Foundation
package import RichPushAPNS
import RichPushCore
import Synchronization

/// What Apple checks of `authorization: bearer <jwt>`: an ES256 JWT whose `kid` names a key of
/// a team, `iss` that team, `iat` (seconds) less than an hour old, signed by that key. One
/// service serves every team, as Apple's does.
package struct APNSProviderTokenCheck: Sendable {
    /// The first team given (the only one, for a simulator of one team).
    package let teamID: String
    /// Public keys by key id (raw 64-byte x‖y, as swift-crypto's key type is not Sendable).
    let keys: [String: Data]
    /// The team of each key id.
    let teams: [String: String]
    package let maxAge: TimeInterval
    /// Tokens whose signature and claims were verified, with their `iat`: a connection sends the
    /// same token for up to an hour, and Apple does not verify it per push either. Only the age
    /// is checked again.
    private let verified = VerifiedTokens()

    package init(teamID: String, keys: [String: P256.Signing.PublicKey], maxAge: TimeInterval = 3600) {
        self.init(teams: [teamID: keys], maxAge: maxAge)
    }

    /// Several teams, each with its keys by key id (a key id names one key, whatever the team).
    package init(teams: [String: [String: P256.Signing.PublicKey]], maxAge: TimeInterval = 3600) {
        teamID = teams.keys.sorted().first ?? ""
        var keys: [String: Data] = [:]
        var owners: [String: String] = [:]
        for (team, teamKeys) in teams {
            for (kid, key) in teamKeys {
                keys[kid] = key.rawRepresentation
                owners[kid] = team
            }
        }
        self.keys = keys
        self.teams = owners
        self.maxAge = maxAge
    }

    /// nil when the token is good; else Apple's 403 reason.
    package func problem(with authorization: String?, now: Date) -> APNSReason? {
        guard let authorization, !authorization.isEmpty else { return .missingProviderToken }
        if let iat = verified.issuedAt(of: authorization) { return ageProblem(iat: iat, now: now) }
        let prefix = "bearer "
        guard authorization.lowercased().hasPrefix(prefix) else { return .invalidProviderToken }
        let parts = authorization.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signatureData = Base64URL.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { return .invalidProviderToken }
        guard header["alg"] as? String == "ES256", let kid = header["kid"] as? String,
            let raw = keys[kid], let key = try? P256.Signing.PublicKey(rawRepresentation: raw)
        else { return .invalidProviderToken }
        guard let iss = claims["iss"] as? String, iss == teams[kid] else { return .invalidProviderToken }
        // iat must be a number of seconds (a string, or milliseconds, is not).
        guard let iat = claims["iat"] as? NSNumber, !(claims["iat"] is String) else { return .invalidProviderToken }
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        let signature =
            (try? P256.Signing.ECDSASignature(rawRepresentation: signatureData))
            ?? (try? P256.Signing.ECDSASignature(derRepresentation: signatureData))
        guard let signature, key.isValidSignature(signature, for: signed) else { return .invalidProviderToken }
        verified.remember(authorization, issuedAt: iat.doubleValue)
        return ageProblem(iat: iat.doubleValue, now: now)
    }

    private func ageProblem(iat: Double, now: Date) -> APNSReason? {
        let age = now.timeIntervalSince1970 - iat
        if age > maxAge { return .expiredProviderToken }
        if age < -300 { return .invalidProviderToken }  // issued in the future (milliseconds, or a wrong clock)
        return nil
    }
}

/// The last few tokens verified (a fleet uses one at a time; 64 leaves room for tests that mint many).
final class VerifiedTokens: Sendable {
    private let tokens = Mutex<[String: Double]>([:])

    func issuedAt(of authorization: String) -> Double? {
        tokens.withLock { $0[authorization] }
    }

    func remember(_ authorization: String, issuedAt: Double) {
        tokens.withLock {
            if $0.count >= 64 { $0.removeAll(keepingCapacity: true) }
            $0[authorization] = issuedAt
        }
    }
}
