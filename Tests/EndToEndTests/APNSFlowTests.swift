import Crypto
import Foundation
import NIOSSL
import RedisTestSupport
import RichPushAPNS
import RichPushCore
import RichPushHTTP2
import RichPushSimulator
import RichPushWorker
import Testing

/// The tutorial's flow through APNs: the worker's APNs adapter sends over TLS and HTTP/2 to a
/// `richpush apns-sim` process, which passes accepted pushes on to the simulated devices.
@Suite("Rich push through apns-sim")
struct APNSFlowTests {
    @Test func aRichPushGoesThroughTheLocalAPNs() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let pem = P256.Signing.PrivateKey().pemRepresentation
                let keyFile = server.directory.appendingPathComponent("AuthKey.p8")
                try Data(pem.utf8).write(to: keyFile)
                let certs = server.directory.appendingPathComponent("apns")
                // A port found free can be taken before apns-sim binds it: one that exits before
                // it listens is started again on another port.
                var started: (sim: ChildProcess, port: Int)?
                for attempt in 1...5 where started == nil {
                    let port = try RedisServer.freePort()
                    let sim = try await ChildProcess(
                        executable: try richpushExecutable(),
                        arguments: [
                            "apns-sim", "--redis-url", server.url, "--port", String(port), "--team-id", "DEF123GHIJ", "--key-id",
                            "ABC123DEFG", "--key-file", keyFile.path, "--topic", "com.example.richpush", "--cert-dir", certs.path,
                            "--hub-prefix", pipeline.prefix, "--log-requests",
                        ], logFile: server.directory.appendingPathComponent("apns-sim-\(attempt).log"))
                    try await waitUntil(timeout: .seconds(60), "apns-sim to listen or exit") {
                        if sim.log.contains("listening") { return true }
                        return try await sim.wait(timeout: .milliseconds(10)) != nil
                    }
                    if sim.log.contains("listening") { started = (sim, port) }
                }
                let (sim, port) = try #require(started, "apns-sim did not listen in 5 attempts")
                let client = try HTTP2Client(
                    configuration: HTTP2Client.Configuration(
                        endpoint: try HTTP2Client.Endpoint(apns: "https://127.0.0.1:\(port)"),
                        trustRoots: try NIOSSLCertificate.fromPEMFile(certs.appendingPathComponent("ca.pem").path)))
                let settings = RichPushWorkerConfiguration.APNSSettings(
                    client: client, topic: "com.example.richpush",
                    signer: try APNSSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ"))
                do {
                    let simulator = try pipeline.simulator(devices: 2, tap: .more, handlePrefix: "iphone", apnsTokens: true)
                    try await withSimulator(simulator) { log in
                        try await withWorker(pipeline.worker(adapter: .apns(settings))) {
                            let id = try await pipeline.send(json: ["message": "through APNs", "richType": "text", "payload": "hello"])
                            try await waitUntil(timeout: .seconds(60), "both devices to open it") { log.count("opened") == 2 }
                            // A device can open the push before the worker has recorded apns-sim's answer.
                            try await waitUntil(timeout: .seconds(60), "the worker to record both as sent") {
                                (try await pipeline.status(id)["counts"] as? [String: Int])?["sent"] == 2
                            }
                            let devices = try await pipeline.status(id)["devices"] as? [[String: Any]] ?? []
                            // The platform's id is the apns-id Apple (here apns-sim) confirmed: a UUID.
                            #expect(
                                devices.allSatisfy { ($0["adapterID"] as? String).flatMap(UUID.init(uuidString:)) != nil }, "\(devices)")
                        }
                    }
                    // Two requests reached apns-sim, both accepted over HTTP/2.
                    let requests = sim.log.split(separator: "\n").filter { $0.hasPrefix("{") }
                    #expect(requests.count == 2 && requests.allSatisfy { $0.contains(#""status":200"#) }, "\(sim.log)")
                } catch {
                    sim.signal(SIGTERM)
                    _ = try await sim.wait(timeout: .seconds(10))
                    client.shutdown()
                    throw error
                }
                sim.signal(SIGTERM)
                #expect(try await sim.wait(timeout: .seconds(60)) == 0, "apns-sim log: \(sim.log.suffix(2000))")
                client.shutdown()
            }
        }
    }
}
