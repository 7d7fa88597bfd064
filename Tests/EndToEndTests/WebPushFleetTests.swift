import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import RedisTestSupport
import RichPushCore
import Testing

/// Browsers through `richpush worker --adapter webpush` and `richpush webpush-sim`, both real
/// processes: the worker encrypts to each subscription and signs with the VAPID key it was given,
/// and the push service, which checks all RFC 8030/8291/8292 ask, accepts every push.
@Suite("Web Push through webpush-sim", .serialized)
struct WebPushFleetTests {
    @Test func everyBrowserGetsEveryNotification() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "webpush") { native in
                let sim = try await native.startWebPushSim()
                try await waitUntil(timeout: .seconds(60), "webpush-sim to listen") { sim.process.log.contains("listening") }
                let vapid = P256.Signing.PrivateKey()
                let keyFile = server.directory.appendingPathComponent("vapid.pem")
                try Data(vapid.pemRepresentation.utf8).write(to: keyFile)
                // Three browsers subscribe, restricted to our application server key, and register.
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(try #require(sim.caFile).path))
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                do {
                    for index in 0..<3 {
                        var request = HTTPClientRequest(url: sim.url + "/subscribe")
                        request.method = .POST
                        let serverKey = Data(vapid.publicKey.x963Representation).base64EncodedString()
                            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                                of: "=", with: "")
                        request.body = .bytes(ByteBuffer(string: "{\"applicationServerKey\":\"\(serverKey)\"}"))
                        let response = try await http.execute(request, timeout: .seconds(30))
                        let body = try await response.body.collect(upTo: 1 << 16)
                        let endpoint = try #require(
                            (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["endpoint"] as? String)
                        let browser = P256.KeyAgreement.PrivateKey()
                        let keys = WebPushKeys(
                            p256dh: Base64URL.encode(browser.publicKey.x963Representation),
                            auth: Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255) }))
                        _ = try await native.installations.save(
                            Installation(
                                id: "web\(index)", platform: .webpush, handle: endpoint, tags: ["username:alice"],
                                owner: "alice", updatedAt: 0, webPushKeys: keys), limits: RegistrationLimits())
                    }
                    try await http.shutdown()
                } catch {
                    try? await http.shutdown()
                    throw error
                }
                let workers = try await native.startWorkers(
                    ["w1", "w2"], adapter: "webpush",
                    sim.workerArguments + [
                        "--webpush-vapid-key-file", keyFile.path, "--webpush-subject", "mailto:ops@example.com",
                    ])
                let ids = try await native.createNotifications(4)
                do {
                    try await waitUntil(timeout: .seconds(90), "twelve pushes accepted") {
                        sim.lines.filter { $0["event"] as? String == "push" && $0["status"] as? Int == 201 }.count == 12
                    }
                } catch {
                    let status = try await native.store.status(id: ids[0])
                    Issue.record(
                        "webpush-sim: \(sim.process.log.suffix(3000))\nworker: \(workers[0].log.suffix(3000))\nstatus: \(String(describing: status))"
                    )
                    throw error
                }
                // Every push the service saw passed its checks (VAPID, TTL, Urgency, aes128gcm).
                let answered = sim.lines.filter { $0["event"] as? String == "push" }.compactMap { $0["status"] as? Int }
                #expect(answered.count == 12 && answered.allSatisfy { $0 == 201 }, "\(sim.process.log)")
                #expect(
                    sim.lines.filter { $0["event"] as? String == "push" }.allSatisfy { $0["sub"] as? String == "mailto:ops@example.com" })
                for id in ids {
                    try await waitUntil(timeout: .seconds(60), "notification \(id) recorded as sent to three browsers") {
                        try await native.store.status(id: id)?.counts["sent"] == 3
                    }
                }
            }
        }
    }

    /// Issue 32 on Web Push: three browsers in three languages register a template with
    /// `Headers`; one send with localized properties gives each its own payload (the push
    /// service sees its encrypted size, the plaintext's plus aes128gcm's 103 bytes, and the
    /// headers the template set), and each status entry names the template and locale.
    @Test func aBrowserWithATemplateGetsItsRenderedPayload() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "webpush-tpl") { native in
                let sim = try await native.startWebPushSim()
                try await waitUntil(timeout: .seconds(60), "webpush-sim to listen") { sim.process.log.contains("listening") }
                let vapid = P256.Signing.PrivateKey()
                let keyFile = server.directory.appendingPathComponent("vapid.pem")
                try Data(vapid.pemRepresentation.utf8).write(to: keyFile)
                let body = #"{"title":"$(title)","richId":"$(richId)"}"#
                let template = InstallationTemplate(
                    name: "web", body: body, headers: ["TTL": "$(ttl)", "Urgency": "low", "Topic": "{'match' + $(match)}"])
                let locales = ["en-US", "fr-FR", "de-AT"]
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(try #require(sim.caFile).path))
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
                var endpoints: [String: String] = [:]
                do {
                    for (index, locale) in locales.enumerated() {
                        var request = HTTPClientRequest(url: sim.url + "/subscribe")
                        request.method = .POST
                        let serverKey = Base64URL.encode(vapid.publicKey.x963Representation)
                        request.body = .bytes(ByteBuffer(string: "{\"applicationServerKey\":\"\(serverKey)\"}"))
                        let response = try await http.execute(request, timeout: .seconds(30))
                        let answer = try await response.body.collect(upTo: 1 << 16)
                        let endpoint = try #require(
                            (try JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any])?["endpoint"] as? String)
                        endpoints["web\(index)"] = endpoint
                        let browser = P256.KeyAgreement.PrivateKey()
                        let keys = WebPushKeys(
                            p256dh: Base64URL.encode(browser.publicKey.x963Representation),
                            auth: Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255) }))
                        _ = try await native.installations.save(
                            Installation(
                                id: "web\(index)", platform: .webpush, handle: endpoint, tags: ["username:alice"],
                                owner: "alice", updatedAt: 0, webPushKeys: keys, templates: [template], locale: locale),
                            limits: RegistrationLimits())
                    }
                    try await http.shutdown()
                } catch {
                    try? await http.shutdown()
                    throw error
                }
                _ = try await native.startWorkers(
                    ["w1"], adapter: "webpush",
                    sim.workerArguments + [
                        "--webpush-vapid-key-file", keyFile.path, "--webpush-subject", "mailto:ops@example.com",
                    ])
                var draft = NotificationDraft(
                    message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice",
                    target: "username:alice")
                draft.properties = try SendProperties.parse(
                    json: Array(#"{"title": {"en": "Hi", "fr": "Salut", "de": "Guten Tag"}, "ttl": 600, "match": 7}"#.utf8))
                let id = try await native.store.create(draft) { _ in "h" }.id
                try await waitUntil(timeout: .seconds(90), "three pushes accepted") {
                    sim.lines.filter { $0["event"] as? String == "push" && $0["status"] as? Int == 201 }.count == 3
                }
                let pushes = sim.lines.filter { $0["event"] as? String == "push" }
                // The rendered plaintext's size identifies each language's payload.
                let expected = Set(["Hi", "Salut", "Guten Tag"].map { #"{"title":"\#($0)","richId":"\#(id)"}"#.utf8.count + 103 })
                #expect(Set(pushes.compactMap { $0["bytes"] as? Int }) == expected, "\(pushes)")
                for push in pushes {
                    #expect(push["urgency"] as? String == "low" && push["topic"] as? String == "match7", "\(push)")
                    let ttl = Int(push["ttl"] as? String ?? "") ?? -1
                    #expect((500...600).contains(ttl), "the template's TTL, from the send: \(push)")
                }
                try await waitUntil(timeout: .seconds(60), "the three recorded as sent") {
                    try await native.store.status(id: id)?.counts["sent"] == 3
                }
                let devices = try #require(try await native.store.status(id: id)?.devices)
                #expect(devices.map(\.locale) == ["en", "fr", "de"] && devices.allSatisfy { $0.template == "web" }, "\(devices)")
            }
        }
    }
}
