import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import Testing

@testable import RichPushAPI

/// `GET /device`, the browser device: served without credentials, under a policy that lets the
/// page reach this origin and the one push service its `push` parameter names, and nothing else.
@Suite("Device page")
struct DevicePageTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Sources/RichPushAPI/Resources")

    @Test func thePageItsScriptAndStyleAreServedWithoutCredentials() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                for (path, file, type) in [
                    ("/device", "device.html", "text/html"), ("/device.js", "device.js", "text/javascript"),
                    ("/device.css", "device.css", "text/css"),
                ] {
                    let response = try await client.execute(uri: path, method: .get)
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType] == "\(type); charset=utf-8")
                    #expect(
                        response.bytes == Array(try Data(contentsOf: Self.resources.appendingPathComponent(file))), "\(path) is \(file)")
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[DevicePageRoutes.referrerPolicy] == "no-referrer")
                    #expect(response.headers[.contentSecurityPolicy]?.contains("connect-src 'self';") == true)
                }
            }
        }
    }

    @Test func thePolicyAllowsTheNamedPushServiceOnly() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let response = try await client.execute(uri: "/device?push=HTTPS://LocalHost:8097/&key=abc", method: .get)
                #expect(response.status == .ok)
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(
                    policy == "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
                        + "connect-src 'self' https://localhost:8097 wss://localhost:8097; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
                )
                let cleartext = try await client.execute(uri: "/device?push=http%3A%2F%2F127.0.0.1%3A8097", method: .get)
                #expect(
                    cleartext.headers[.contentSecurityPolicy]?.contains("connect-src 'self' http://127.0.0.1:8097 ws://127.0.0.1:8097;")
                        == true)
                for bad in [
                    "https%3A%2F%2Fa.example%2Fpath", "https%3A%2F%2Fa.example%3B%20script-src%20*", "http%3A%2F%2Fpush.example.com",
                    "javascript%3Aalert(1)", "https%3A%2F%2Fuser%40a.example", "https%3A%2F%2Fa.example%3A0",
                    "https%3A%2F%2Fa.example%3A65536",
                    "https%3A%2F%2Fa%20b", "https%3A%2F%2F%5B%3A%3A1", "https%3A%2F%2F*.example",
                    "https%3A%2F%2Fa.example%2C%20https%3A%2F%2Fb", "",
                ] {
                    let refused = try await client.execute(uri: "/device?push=\(bad)", method: .get)
                    #expect(refused.status == .badRequest, "push=\(bad)")
                    #expect(refused.errorCode == "bad_push_origin", "push=\(bad)")
                    #expect(refused.headers[.contentSecurityPolicy] == nil)
                }
            }
        }
    }

    @Test func anOriginIsRebuiltFromItsParts() {
        #expect(PushServiceOrigin("https://push.example.com")?.origin == "https://push.example.com")
        #expect(PushServiceOrigin("https://[::1]:8443")?.webSocketOrigin == "wss://[::1]:8443")
        #expect(PushServiceOrigin("http://localhost:9/")?.origin == "http://localhost:9")
        #expect(PushServiceOrigin("http://127.0.0.1")?.webSocketOrigin == "ws://127.0.0.1")
        #expect(PushServiceOrigin("http://10.0.0.1:80") == nil, "cleartext only on loopback")
        #expect(PushServiceOrigin("https://-a.example") == nil)
        #expect(PushServiceOrigin("https://a..example") == nil)
        #expect(PushServiceOrigin("https://ａ.example") == nil, "ASCII only")
        #expect(PushServiceOrigin("https://a.example:８０") == nil)
        #expect(PushServiceOrigin("https://a.example?x") == nil && PushServiceOrigin("https://a.example#x") == nil)
        #expect(PushServiceOrigin("wss://a.example") == nil)
    }
}
