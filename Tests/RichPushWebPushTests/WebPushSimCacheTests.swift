import Crypto
import Foundation
import Testing

/// webpush-sim verifies a VAPID token's signature once, as a push service's cache does, yet checks
/// every push's claims: a remembered token that has expired is refused, a token whose signature
/// differs from the remembered one is verified anew, and a remembered token is still refused by a
/// subscription restricted to another key.
@Suite("WebPushSim verified-token cache")
struct WebPushSimCacheTests {
    @Test func aRememberedTokenIsStillCheckedForExpiryAndAForgedOneIsNot() async throws {
        try await WebPushSimHarness.with { sim in
            let sender = TestSender()
            let subscription = try await sim.subscribe()
            let token = sender.jwt(TestSender.Claims(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 120))
            func push(_ token: String) async throws -> WebPushSimHarness.Answer {
                try await sim.push(subscription, sender: sender) { headers in
                    headers.removeAll { $0.0 == "authorization" }
                    headers.append(("authorization", sender.authorization(token: token)))
                }
            }
            #expect(try await push(token).status == 201)
            #expect(try await push(token).status == 201)
            // The same remembered header to a subscription restricted to another key (RFC 8292 §4.2).
            let restricted = try await sim.subscribe(applicationServerKey: P256.Signing.PrivateKey().publicKey)
            let mismatch = try await sim.push(restricted, sender: sender) { headers in
                headers.removeAll { $0.0 == "authorization" }
                headers.append(("authorization", sender.authorization(token: token)))
            }
            #expect(mismatch.status == 403 && mismatch.reason == "vapid_key_mismatch", "\(mismatch.json)")
            // Same header and claims, another key's signature: not the remembered token.
            let parts = token.split(separator: ".")
            let other = TestSender().jwt(TestSender.Claims(aud: sim.origin, exp: sim.clock.now().timeIntervalSince1970 + 120)).split(
                separator: ".")
            let forged = "\(parts[0]).\(parts[1]).\(other[2])"
            let refused = try await push(forged)
            #expect(refused.status == 401 && refused.reason == "vapid_bad_signature", "\(refused.json)")
            // The remembered token past its exp: refused.
            sim.clock.advance(seconds: 180)
            let expired = try await push(token)
            #expect(expired.status == 401 && expired.reason == "vapid_bad_exp", "\(expired.json)")
        }
    }
}
