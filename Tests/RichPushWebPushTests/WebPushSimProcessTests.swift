import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import RedisTestSupport
import Testing

/// `richpush webpush-sim` as a process: its flags reach the simulator, it writes the CA senders
/// trust, speaks HTTP/2 over TLS, and logs one JSON line per request.
@Suite("WebPushSim process")
struct WebPushSimProcessTests {
    @Test func theCommandServesWithItsCAAndLogsEachRequest() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-sim-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sim = try await ChildProcess(
            executable: try richpushExecutable(),
            arguments: [
                "webpush-sim", "--port", "0", "--cert-dir", directory.appendingPathComponent("certs").path, "--log-requests", "--fail",
                "503:100%",
            ], logFile: directory.appendingPathComponent("webpush-sim.log"))
        var http: HTTPClient?
        do {
            try await waitUntil(timeout: .seconds(60), "webpush-sim to listen") { sim.log.contains("listening on https://127.0.0.1:") }
            let origin = try #require(sim.log.split(separator: " ").first { $0.hasPrefix("https://127.0.0.1:") }.map(String.init))
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("certs/ca.pem").path))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            http = client
            var subscribe = HTTPClientRequest(url: "\(origin)/subscribe")
            subscribe.method = .POST
            let created = try await client.execute(subscribe, timeout: .seconds(30))
            #expect(created.status == .created && created.version == .http2)
            let object =
                try JSONSerialization.jsonObject(with: Data(buffer: try await created.body.collect(upTo: 1 << 16))) as? [String: String]
            let endpoint = try #require(object?["endpoint"])
            let sender = TestSender()
            func push(ttl: String?) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: endpoint)
                request.method = .POST
                if let ttl { request.headers.add(name: "TTL", value: ttl) }
                request.headers.add(name: "Content-Encoding", value: "aes128gcm")
                request.headers.add(name: "Authorization", value: sender.authorization(audience: origin, now: Date()))
                request.body = .bytes(ByteBuffer(bytes: TestSender.aes128gcmBody(plaintextBytes: 50)))
                return try await client.execute(request, timeout: .seconds(30))
            }
            let unavailable = try await push(ttl: "60")
            #expect(unavailable.status == .serviceUnavailable && unavailable.headers["retry-after"] == ["1"], "--fail 503:100%")
            #expect(try await push(ttl: nil).status == .badRequest)
            try await waitUntil(timeout: .seconds(30), "two push log lines") {
                sim.log.components(separatedBy: "\"event\":\"push\"").count == 3
            }
            let lines = sim.log.split(separator: "\n").filter { $0.contains("\"event\":\"push\"") }
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(lines.map { $0["status"] as? Int } == [503, 400])
            #expect(lines.map { $0["reason"] as? String } == ["injected_fault", "missing_ttl"])
            #expect(
                lines.first?["sub"] as? String == "mailto:push@example.com" && lines.first?["ttl"] as? String == "60"
                    && lines.first?["bytes"] as? Int == 153)
        } catch {
            sim.signal(SIGTERM)
            _ = try? await sim.wait(timeout: .seconds(10))
            try? await http?.shutdown()
            throw error
        }
        sim.signal(SIGTERM)
        let started = ContinuousClock.now
        let status = try await sim.wait(timeout: .seconds(30))
        #expect(
            status == 0,
            "webpush-sim after SIGTERM: \(status.map(String.init) ?? "still running") after \(ContinuousClock.now - started); its log:\n\(sim.log)"
        )
        try await http?.shutdown()
    }
}
