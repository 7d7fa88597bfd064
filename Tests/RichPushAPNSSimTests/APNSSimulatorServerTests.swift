import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import PlatformSimTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import RichPushSimTLS
import Synchronization
import Testing

/// The local APNs over real TLS and HTTP/2 on loopback, with async-http-client as the client.
@Suite("apns-sim over TLS and HTTP/2")
struct APNSSimulatorServerTests {
    @Test func answersAsAppleDoesOverHTTP2() async throws {
        let signer = try LocalAPNS.signer()
        let apns = try await LocalAPNS.start(maxStreams: 100)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(apns.certificates.caPEM.utf8)))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        do {
            func send(_ change: (inout APNSIncomingRequest) -> Void = { _ in }) async throws -> (HTTPClientResponse, String) {
                let incoming = try APNSServerRulesTests.request(token: try signer.token(issuedAt: Date()), change)
                var request = HTTPClientRequest(url: "https://localhost:\(apns.port)\(incoming.path)")
                request.method = .POST
                for header in incoming.headers { request.headers.add(name: header.name, value: header.value) }
                request.body = .bytes(ByteBuffer(bytes: incoming.body))
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 4096)
                return (response, String(buffer: body))
            }
            let (accepted, acceptedBody) = try await send()
            #expect(accepted.status.code == 200 && acceptedBody.isEmpty)
            #expect(accepted.version == .http2)
            #expect(accepted.headers.first(name: "apns-id") == APNSID.make(notification: 42, installation: "i1"))
            let (refused, refusedBody) = try await send(APNSServerRulesTests.header("apns-priority", "10"))
            #expect(refused.status.code == 400 && refusedBody == #"{"reason":"BadPriority"}"#)
            // Many at once once the token was accepted: the connection allows more than one stream.
            try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<50 { group.addTask { try await send().0.status.code } }
                for try await code in group { #expect(code == 200) }
            }
            #expect(apns.lines.count == 52)
            #expect(apns.lines[1].contains(#""reason":"BadPriority""#))
            // async-http-client lets HPACK index :path and authorization; the log says so (our
            // client's requests show an empty list: APNSClientTests).
            #expect(apns.lines[0].contains(#""indexed":[":path","authorization"]"#), "\(apns.lines[0])")
        } catch {
            try await client.shutdown()
            try await apns.stop()
            throw error
        }
        try await client.shutdown()
        try await apns.stop()
    }
}
