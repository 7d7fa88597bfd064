import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOFoundationCompat
import RichPushCore

/// A simulated browser's push subscription: the P-256 ECDH key pair and 16-byte authentication
/// secret it made itself (RFC 8291 §2, as `PushManager.subscribe()` does), and what the push
/// service gave it: the endpoint (its handle at RichPush) and the WebSocket it receives on.
struct WebDevice: Codable, Sendable {
    let index: Int
    /// The ECDH private key's raw scalar (Crypto's key type is not `Sendable`).
    let privateKeyBytes: [UInt8]
    /// `keys.p256dh`: the uncompressed public key.
    let publicKey: [UInt8]
    let auth: [UInt8]
    let endpoint: String
    let subscriptionId: String
    let webSocket: URL

    var privateKey: P256.KeyAgreement.PrivateKey {
        get throws { try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKeyBytes) }
    }

    /// `PushSubscription.toJSON()`: what the device registers with RichPush.
    var subscriptionJSON: [String: Any] {
        [
            "endpoint": endpoint, "expirationTime": NSNull(),
            "keys": ["p256dh": Base64URL.encode(publicKey), "auth": Base64URL.encode(auth)],
        ]
    }

    /// Makes the keys and subscribes at the push service: `POST /subscribe` with the application
    /// server key the subscription is restricted to, if any.
    static func subscribe(index: Int, at service: SimulatorConfiguration.WebPushService, http: HTTPClient) async throws -> WebDevice {
        let privateKey = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var request = HTTPClientRequest(url: service.url.appendingPathComponent("subscribe").absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body: [String: String] = service.applicationServerKey.map { ["applicationServerKey": Base64URL.encode($0)] } ?? [:]
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = Array(buffer: try await response.body.collect(upTo: 1 << 16))
        guard response.status.code == 201 || response.status.code == 200 else {
            throw SimulatorError(
                "subscribing at \(service.url) failed: HTTP \(response.status.code) \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
        guard let answer = JSONValue.parse(bytes), let endpoint = answer["endpoint"]?.string, let id = answer["subscriptionId"]?.string,
            let socket = answer["webSocket"]?.string.flatMap(URL.init(string:))
        else {
            throw SimulatorError(
                "the push service's subscription is not {endpoint, subscriptionId, webSocket}: \(String(decoding: bytes.prefix(300), as: UTF8.self))"
            )
        }
        return WebDevice(
            index: index, privateKeyBytes: Array(privateKey.rawRepresentation), publicKey: Array(privateKey.publicKey.x963Representation),
            auth: auth, endpoint: endpoint, subscriptionId: id, webSocket: socket)
    }
}
