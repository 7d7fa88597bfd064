import Crypto
import Foundation
import RichPushCore
import Synchronization

@testable import RichPushWebPush

/// Base64url with or without padding, for the vectors; traps on a typo in a test's constant.
func base64URL(_ text: String) -> [UInt8] {
    guard let bytes = WebPushSubscription.decodeBase64URL(text) else { preconditionFailure("not base64url: \(text)") }
    return bytes
}

/// A web device's side of a subscription: its ECDH key and auth secret, kept to decrypt.
struct TestDevice {
    let rawPrivateKey: Data
    let auth: [UInt8]
    let subscription: WebPushSubscription

    init(endpoint: String = "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV") throws {
        let key = P256.KeyAgreement.PrivateKey()
        var random = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        rawPrivateKey = key.rawRepresentation
        self.auth = auth
        subscription = try WebPushSubscription(endpoint: endpoint, p256dh: [UInt8](key.publicKey.x963Representation), auth: auth)
    }

    var privateKey: P256.KeyAgreement.PrivateKey { try! P256.KeyAgreement.PrivateKey(rawRepresentation: rawPrivateKey) }

    func decrypt(_ body: [UInt8]) throws -> [UInt8] {
        try WebPushEncryption.decrypt(body, receiverPrivateKey: privateKey, auth: auth)
    }
}

/// A wall clock that moves only when told.
final class TestClock: Sendable {
    private let date: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { date = Mutex(start) }

    var now: Date { date.withLock { $0 } }
    var function: @Sendable () -> Date { { self.now } }

    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// A JWT taken apart, as a push service reads it.
struct DecodedJWT {
    let headerJSON: String
    let header: [String: String]
    let claims: [String: Any]
    let signingInput: String
    let signature: [UInt8]

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let claims = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw TestFailure("not a JWT of three base64url parts: \(token)") }
        headerJSON = String(decoding: header, as: UTF8.self)
        self.header = try JSONSerialization.jsonObject(with: header) as? [String: String] ?? [:]
        self.claims = try JSONSerialization.jsonObject(with: claims) as? [String: Any] ?? [:]
        signingInput = parts[0] + "." + parts[1]
        self.signature = Array(signature)
    }
}

/// The `t=` and `k=` of a `vapid` Authorization value (RFC 8292 §3).
func vapidParameters(_ authorization: String) throws -> (token: String, key: String) {
    guard authorization.hasPrefix("vapid t=") else { throw TestFailure("not a vapid scheme: \(authorization)") }
    let parts = authorization.dropFirst("vapid ".count).split(separator: ", ")
    guard parts.count == 2, parts[0].hasPrefix("t="), parts[1].hasPrefix("k=") else {
        throw TestFailure("not 't=…, k=…': \(authorization)")
    }
    return (String(parts[0].dropFirst(2)), String(parts[1].dropFirst(2)))
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A VAPID key of our own, base64url, as `WebPushCredential.privateKey` keeps it.
func makeVAPIDKey() -> String { Base64URL.encode(P256.Signing.PrivateKey().rawRepresentation) }
