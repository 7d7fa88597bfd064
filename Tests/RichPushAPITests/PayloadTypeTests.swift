import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import Testing

@testable import RichPushAPI

/// A payload may be declared only as something a device shows: raster images, audio, video,
/// plain text and JSON. Anything else is 415, whether declared in JSON or by a multipart part.
@Suite("Payload types")
struct PayloadTypeTests {
    static func send(
        _ client: any TestClientProtocol, contentType: String, richType: String = "text", dryRun: Bool = false
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/notifications" + (dryRun ? "?dryRun=true" : ""), method: .post,
            headers: APIFixture.basic("alice") + [.contentType: "application/json"],
            body: APIFixture.json(["richType": richType, "payload": richType == "text" ? "<b>hi</b>" : "AAAA", "contentType": contentType]))
    }

    @Test func onlyWhatADeviceShowsIsAccepted() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                for refused in [
                    "text/html", "image/svg+xml", "Text/HTML; charset=utf-8", "application/javascript", "application/pdf",
                    "application/xhtml+xml",
                    "text/xml", "audio/<b>", "multipart/mixed",
                ] {
                    let response = try await Self.send(client, contentType: refused)
                    #expect(
                        response.status == .unsupportedMediaType && response.errorCode == "unsupported_payload_type",
                        "\(refused): \(response.status)")
                    let named = MediaType.essence(of: refused)
                    #expect(
                        response.errorMessage.contains("'\(named)'") && response.errorMessage.contains("image/png, image/jpeg"),
                        "\(response.errorMessage)")
                }
                #expect(try await Self.send(client, contentType: "text/html", dryRun: true).status == .unsupportedMediaType)
                for accepted in [
                    "image/png", "IMAGE/JPEG", "image/gif", "image/webp", "image/heic", "image/heif", "audio/mpeg", "audio/x-caf",
                    "video/mp4",
                    "video/quicktime", "text/plain; charset=utf-8", "text/uri-list", "application/json",
                ] {
                    let response = try await Self.send(
                        client, contentType: accepted,
                        richType: accepted.hasPrefix("text") || accepted.hasPrefix("application") ? "text" : "img")
                    #expect(response.status == .accepted, "\(accepted): \(response.status) \(response.errorMessage)")
                }
                // application/octet-stream is no declaration: the type is inferred from the bytes.
                let inferred = try await client.sendImage("alice")
                #expect(inferred.status == .accepted)
                let octet = try await Self.send(client, contentType: "application/octet-stream", richType: "img")
                #expect(octet.status == .accepted)
                let id = try #require(octet.json["id"] as? String)
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.headers[.contentType] == "application/octet-stream")
                    #expect(response.headers[.contentDisposition]?.hasPrefix("attachment") == true)
                }
            }
        }
    }

    @Test func aMultipartPartDeclaredHTMLIs415() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                func send(partType: String) async throws -> TestResponse {
                    let body =
                        "--b\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nhi\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n"
                        + "Content-Type: \(partType)\r\n\r\n<script>alert(1)</script>\r\n--b--\r\n"
                    return try await client.execute(
                        uri: "/api/notifications", method: .post,
                        headers: APIFixture.basic("alice") + [.contentType: "multipart/form-data; boundary=b"],
                        body: ByteBuffer(string: body))
                }
                let html = try await send(partType: "text/html")
                #expect(
                    html.status == .unsupportedMediaType && html.errorCode == "unsupported_payload_type"
                        && html.errorMessage.contains("'text/html'"))
                #expect(try await send(partType: "image/svg+xml").status == .unsupportedMediaType)
                #expect(try await send(partType: "text/plain").status == .accepted)
            }
        }
    }
}
