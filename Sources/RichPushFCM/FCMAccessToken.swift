package import AsyncHTTPClient
package import Foundation
package import Hiredis
import NIOCore
import RichPushCredentials

/// The OAuth2 access token for FCM HTTP v1, shared by every worker through Redis: one worker
/// signs the service account's assertion and exchanges it at `token_uri` (RFC 7523 JWT bearer
/// grant); the others use the token it stored, until five minutes before it expires. A token FCM
/// refuses (401) is replaced once.
package final class FCMAccessToken: Sendable {
    let shared: SharedToken

    package init(
        redis: any RedisClient, prefix: String, account: FCMServiceAccount, http: HTTPClient, timeout: Duration = .seconds(10),
        localTTL: Duration = .seconds(5)
    ) {
        shared = SharedToken(
            redis: redis, key: "\(prefix):fcm:token:\(account.projectID):\(account.clientEmail)",
            refreshAfter: .seconds(50 * 60), localTTL: localTTL,
            // The lock outlives a slow exchange, so a second worker waits instead of exchanging too.
            lockTTL: timeout + .seconds(10)
        ) { now in
            try await Self.exchange(account: account, http: http, timeout: timeout, now: now)
        }
    }

    package func current(now: Date = Date()) async throws -> String {
        try await shared.current(now: now)
    }

    package func replace(rejected: String, now: Date = Date()) async throws -> String {
        try await shared.replace(rejected: rejected, now: now)
    }

    /// POSTs the signed assertion to the token endpoint and reads `access_token` and `expires_in`.
    static func exchange(account: FCMServiceAccount, http: HTTPClient, timeout: Duration, now: Date) async throws -> SharedToken.Minted {
        let assertion = try account.assertion(issuedAt: now)
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await http.execute(request, timeout: TimeAmount(timeout))
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw FCMConfigurationError("cannot reach the token endpoint \(account.tokenURI): \(error)")
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(Array(buffer: body)))) as? [String: Any]
        guard response.status.code == 200, let token = object?["access_token"] as? String, !token.isEmpty,
            let expiresIn = (object?["expires_in"] as? NSNumber)?.doubleValue, expiresIn > 0
        else {
            let reason = [object?["error"] as? String, object?["error_description"] as? String].compactMap { $0 }.joined(separator: ": ")
            throw FCMConfigurationError(
                "the token endpoint \(account.tokenURI) refused the service account (HTTP \(response.status.code)\(reason.isEmpty ? "" : ", \(reason)"))"
            )
        }
        return SharedToken.Minted(token: token, issuedAt: now, expiresAt: now.addingTimeInterval(expiresIn))
    }
}
