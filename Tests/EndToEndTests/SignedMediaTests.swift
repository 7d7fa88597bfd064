import APITestSupport
import AsyncHTTPClient
import Foundation
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// `GET /media/{app}/{id}`: the payload by the signed URL an alert carries, on real Redis and
/// real HTTP, without credentials: its own device gets it (counted as fetched); another device's
/// id, a changed expiry, an expired signature and a device it was not sent to are refused.
@Suite("Signed media URLs")
struct SignedMediaTests {
    @Test func aSignedURLServesItsDeviceAndNothingElse() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let phone = try await register(pipeline, handle: "\(pipeline.prefix)-phone")
                let tablet = try await register(pipeline, handle: "\(pipeline.prefix)-tablet")
                let id = try await withWorker(pipeline.worker()) {
                    let id = try await pipeline.send(json: [
                        "message": "m", "richType": "text", "payload": "the story", "delivery": "alert",
                    ])
                    try await waitUntil(timeout: .seconds(60), "the alerts to be held for both devices") {
                        (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 2
                    }
                    return id
                }
                // The key the workers signed with, from Redis.
                let signer = MediaURLSigner(redis: pipeline.redis, keys: pipeline.keys)
                let later = Int64(Date().timeIntervalSince1970) + 3600
                let url = try await signer.url(base: "", app: .default, id: id, installation: phone, expires: later)
                let good = try await get(pipeline, url)
                #expect(good.status == 200 && String(decoding: good.body, as: UTF8.self) == "the story", "\(good.status)")
                #expect((try await pipeline.status(id)["counts"] as? [String: Int])?["fetched"] == 1)
                // The phone's URL with the tablet's id: the signature does not match.
                let swapped = url.replacingOccurrences(of: "installation=\(phone)", with: "installation=\(tablet)")
                #expect(try await get(pipeline, swapped).code == "bad_signature")
                #expect(
                    try await get(pipeline, url.replacingOccurrences(of: "expires=\(later)", with: "expires=\(later + 1)")).code
                        == "bad_signature")
                let past = try await signer.url(base: "", app: .default, id: id, installation: phone, expires: later - 7200)
                let expired = try await get(pipeline, past)
                #expect(expired.status == 403 && expired.code == "expired_signature")
                // Validly signed, for a device the notification was not sent to: as if it did not exist.
                let stranger = try await signer.url(base: "", app: .default, id: id, installation: "not-sent", expires: later)
                #expect(try await get(pipeline, stranger).status == 404)
                let missing = try await get(pipeline, "/media/default/\(id)?installation=\(phone)")
                #expect(missing.status == 400 && missing.code == "bad_media_url")
            }
        }
    }

    /// An alert or auto delivery of audio larger than an iOS extension attaches (5 MB) is
    /// refused at send time; the same payload silent is accepted.
    @Test func anAttachmentTooLargeForIOSIsRefusedAtSendTime() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(
                server: server,
                configure: {
                    $0.maxPayloadBytes = 6_000_000
                    // A 5 MB upload to a debug build on a busy machine takes its time.
                    $0.bodyTimeout = .seconds(120)
                }
            ) { pipeline in
                let sound = Data(count: 5_000_001)
                for delivery in ["alert", "auto"] {
                    let answer = try await post(pipeline, sound, delivery: delivery)
                    #expect(answer.status == 422 && answer.code == "attachment_too_large", "\(delivery): \(answer.status)")
                }
                #expect(try await post(pipeline, sound, delivery: "silent").status == 202)
            }
        }
    }

    private func register(_ pipeline: Pipeline, handle: String) async throws -> String {
        let (status, body) = try await request(pipeline, "POST", "/api/register?handle=\(handle)")
        let id = try #require(status == 200 ? try JSONDecoder().decode(String.self, from: body) : nil, "\(status)")
        let (put, _) = try await request(
            pipeline, "PUT", "/api/register/\(id)",
            json: try JSONSerialization.data(withJSONObject: ["Platform": "apns", "Handle": handle]))
        #expect(put == 200)
        return id
    }

    /// A GET without credentials: the status, the body, and the error code if any.
    private func get(_ pipeline: Pipeline, _ path: String) async throws -> (status: Int, body: Data, code: String?) {
        let (status, body) = try await request(pipeline, "GET", path, authorized: false)
        let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        return (status, body, (json?["error"] as? [String: Any])?["code"] as? String)
    }

    private func post(_ pipeline: Pipeline, _ payload: Data, delivery: String) async throws -> (status: Int, code: String?) {
        var request = HTTPClientRequest(url: pipeline.baseURL.absoluteString + "/api/notifications")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data("alice:alice-pw".utf8).base64EncodedString())
        let boundary = "b0undary"
        request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"delivery\"\r\n\r\n\(delivery)\r\n".utf8)
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"richType\"\r\n\r\nsound\r\n".utf8)
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"sound\"; filename=\"a.mp3\"\r\n".utf8)
        body += Data("Content-Type: audio/mpeg\r\n\r\n".utf8) + payload + Data("\r\n--\(boundary)--\r\n".utf8)
        request.body = .bytes(body)
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(120))
        let answer = try await response.body.collect(upTo: 1 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: answer))) as? [String: Any]
        return (Int(response.status.code), (json?["error"] as? [String: Any])?["code"] as? String)
    }

    private func request(
        _ pipeline: Pipeline, _ method: String, _ path: String, json: Data? = nil, authorized: Bool = true
    ) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: pipeline.baseURL.absoluteString + path)
        request.method = .init(rawValue: method)
        if authorized { request.headers.add(name: "Authorization", value: "Basic " + Data("alice:alice-pw".utf8).base64EncodedString()) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(json)
        }
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), Data(buffer: body))
    }
}
