import Foundation
import RedisTestSupport
import Testing
import _CryptoExtras

/// `richpush worker --adapter` and its FCM options as a user meets them: each mistake, and a token
/// endpoint that cannot be reached, stops the worker at start with a message naming the problem.
@Suite("Worker adapter options")
struct WorkerAdapterOptionsTests {
    /// Runs `richpush worker` with `arguments` to its end; its exit status and output.
    static func worker(_ arguments: [String], server: RedisServer, name: String) async throws -> (status: Int32?, output: String) {
        let process = try await ChildProcess(
            executable: try richpushExecutable(),
            arguments: ["worker", "--redis-url", server.url, "--queue-prefix", "opts-\(name)"] + arguments,
            logFile: server.directory.appendingPathComponent("worker-\(name).log"))
        let status = try await process.wait(timeout: .seconds(30))
        return (status, process.log)
    }

    /// A service account whose token endpoint is `tokenURI`.
    static func serviceAccount(in directory: URL, tokenURI: String) throws -> String {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let object: [String: Any] = [
            "type": "service_account", "project_id": "richpush-opts", "private_key_id": "k", "private_key": key.pkcs8PEMRepresentation,
            "client_email": "w@richpush-opts.iam.gserviceaccount.com", "token_uri": tokenURI,
        ]
        let file = directory.appendingPathComponent("sa-\(UUID().uuidString.prefix(6)).json")
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        return file.path
    }

    @Test func mistakesAreNamedAtStart() async throws {
        try await withRedisServer { server in
            let cases: [(name: String, arguments: [String], message: String)] = [
                ("unknown", ["--adapter", "apns,blackberry"], "--adapter"),
                ("no-credentials", ["--adapter", "fcm"], "--adapter fcm needs --fcm-credentials"),
                ("credentials-without-fcm", ["--fcm-credentials", "x.json"], "--fcm-credentials is for --adapter fcm"),
                (
                    "missing-file", ["--adapter", "fcm", "--fcm-credentials", server.directory.appendingPathComponent("none.json").path],
                    "cannot read the FCM service-account file"
                ),
                ("apns-without-key", ["--adapter", "apns,fcm"], "--adapter apns needs --apns-topic"),
            ]
            for (name, arguments, message) in cases {
                let (status, output) = try await Self.worker(arguments, server: server, name: name)
                #expect(status != 0 && status != nil, "\(name): exit \(String(describing: status))")
                #expect(output.contains(message), "\(name): \(output)")
            }
            let notJSON = server.directory.appendingPathComponent("not-json.json")
            try Data("{\"type\":\"service_account\"".utf8).write(to: notJSON)
            let (status, output) = try await Self.worker(
                ["--adapter", "fcm", "--fcm-credentials", notJSON.path], server: server, name: "not-json")
            #expect(status != 0 && output.contains(notJSON.path), "\(output)")
        }
    }

    @Test func anUnreachableTokenEndpointStopsTheWorkerAtStart() async throws {
        try await withRedisServer { server in
            try await RedisServer.withRefusingPort { port in
                let file = try Self.serviceAccount(in: server.directory, tokenURI: "http://127.0.0.1:\(port)/token")
                let (status, output) = try await Self.worker(
                    ["--adapter", "hub,fcm", "--fcm-credentials", file, "--fcm-timeout", "2"], server: server, name: "unreachable")
                #expect(status != 0 && status != nil)
                #expect(output.contains("FCM: cannot reach the token endpoint http://127.0.0.1:\(port)/token"), "\(output)")
            }
        }
    }
}
