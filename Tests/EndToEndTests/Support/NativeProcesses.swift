import Crypto
import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import RichPushStorage
import Synchronization
import Testing

/// `richpush apns-sim`, `richpush fcm-sim` and `richpush worker` as child processes on a private
/// redis-server, for the tests of what crosses process boundaries (a fleet of workers sharing a
/// token, a hold, a dead token): each test starts what it needs here, and ``with(server:prefix:_:)``
/// stops exactly those processes by PID when the test ends, however it ends.
struct NativeProcesses {
    static let teamID = "DEF123GHIJ"
    static let keyID = "ABC123DEFG"
    static let topic = "com.example.richpush"

    let server: RedisServer
    let redis: RedisConnection
    let prefix: String
    let keys: StorageKeys
    let queue: JobQueue
    let store: RedisNotificationStore
    let installations: RedisInstallationStore
    /// Every process started through this value, in order.
    private let started = StartedProcesses()

    /// A store under a prefix of its own on `server`; after `body`, every process it started gets
    /// SIGTERM and must exit 0 (after a body that threw, they are stopped and the error goes on).
    static func with(server: RedisServer, prefix name: String, _ body: (NativeProcesses) async throws -> Void) async throws {
        try await with(server: server, keyPrefix: String(uniqueKeyPrefix(name).dropLast()), body)
    }

    /// The same under `prefix` exactly: a ``Pipeline``'s, so processes share its API's keys.
    static func with(server: RedisServer, keyPrefix prefix: String, _ body: (NativeProcesses) async throws -> Void) async throws {
        let redis = RedisConnection(configuration: server.configuration)
        let keys = StorageKeys(prefix: prefix)
        let queue = JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix))
        let native = NativeProcesses(
            server: server, redis: redis, prefix: prefix, keys: keys, queue: queue,
            store: RedisNotificationStore(redis: redis, keys: keys, queue: queue, retention: .seconds(600)),
            installations: RedisInstallationStore(redis: redis, keys: keys))
        do {
            try await body(native)
        } catch {
            let processes = native.started.all
            for process in processes { process.signal(SIGTERM) }
            for process in processes { _ = try await process.wait(timeout: .seconds(60)) }
            await redis.close()
            throw error
        }
        let processes = native.started.all
        for process in processes { process.signal(SIGTERM) }
        // A clean exit is what is checked, not its speed: a drain on a busy 2-core machine took over 15 s.
        for process in processes {
            let status = try await process.wait(timeout: .seconds(60))
            #expect(
                status == 0,
                "a process did not exit cleanly (status \(status.map(String.init) ?? "none after 60 s")): \(process.log.suffix(3000))")
        }
        await redis.close()
    }

    private func track(_ process: ChildProcess) -> ChildProcess {
        started.add(process)
        return process
    }

    /// Starts a simulator on a port found free and returns once it says it listens. The port can
    /// be taken between that check and the simulator's bind (every test beside it opens servers
    /// and connections): a simulator that exits before it listens is started again on another
    /// port, up to 5 times. One that neither listens nor exits within a minute is killed, and the
    /// test fails with its log (a test once waited 60 s for a webpush-sim that never said a word).
    private func startListening(_ start: (Int) async throws -> ChildProcess) async throws -> (process: ChildProcess, port: Int) {
        var attempts: [String] = []
        for _ in 1...5 {
            let port = try RedisServer.freePort()
            let process = try await start(port)
            let deadline = ContinuousClock.now + .seconds(60)
            while !process.log.contains("listening") {
                if let status = try await process.wait(timeout: .milliseconds(50)) {
                    attempts.append("port \(port): exited \(status): \(process.log.suffix(400))")
                    break
                }
                guard ContinuousClock.now < deadline else {
                    process.signal(SIGKILL)
                    _ = try await process.wait(timeout: .seconds(10))
                    throw RedisServerError("not listening after 60 s on port \(port): \(process.log.suffix(2000))")
                }
            }
            if process.log.contains("listening") { return (track(process), port) }
        }
        throw RedisServerError("did not listen in 5 attempts:\n\(attempts.joined(separator: "\n"))")
    }

    /// Registers `count` iPhones (`ios<n>`, 64-hex tokens from `first`) or Android phones
    /// (`android<n>`) of alice.
    func register(iPhones count: Int, first: Int) async throws {
        for index in 0..<count {
            _ = try await installations.save(
                Installation(
                    id: "ios\(index)", platform: .apns, handle: String(format: "%064lx", first + index),
                    tags: ["username:alice"], owner: "alice", updatedAt: 0), limits: RegistrationLimits())
        }
    }

    func register(androids count: Int, named name: String) async throws {
        for index in 0..<count {
            _ = try await installations.save(
                Installation(
                    id: "android\(index)", platform: .fcm, handle: "\(name)\(index):APA91b-\(index)",
                    tags: ["username:alice"], owner: "alice", updatedAt: 0), limits: RegistrationLimits())
        }
    }

    /// Creates `count` text notifications to alice's devices; their ids.
    func createNotifications(_ count: Int) async throws -> [Int] {
        var ids: [Int] = []
        for _ in 0..<count {
            ids.append(
                try await store.create(
                    NotificationDraft(
                        message: "m", richType: .text, contentType: "text/plain", payload: Array("p".utf8),
                        creator: "alice", target: "username:alice")
                ) { _ in "h" }.id)
        }
        return ids
    }

    /// A simulator process and the worker flags that reach it.
    struct Simulator {
        let process: ChildProcess
        let workerArguments: [String]
        /// Where it listens (`https://127.0.0.1:<port>`) and the CA it made, for workers that
        /// reach two simulators (an APNs production and sandbox pair).
        var url = ""
        var caFile: URL?
        /// Its `--log-requests` lines about requests it answered (not its token endpoint's).
        var requests: [[String: Any]] { NativeProcesses.lines(process.log).filter { $0["status"] != nil && $0["issued"] == nil } }
        /// Every line it logged, token exchanges included.
        var lines: [[String: Any]] { NativeProcesses.lines(process.log) }
    }

    /// Starts `richpush apns-sim` (logging requests, passing nothing on) with `arguments` added.
    /// `name` keeps a second simulator's certificates and log apart (both check the one key).
    func startAPNsSim(_ arguments: [String] = [], name: String = "apns") async throws -> Simulator {
        let keyFile = server.directory.appendingPathComponent("AuthKey.p8")
        if !FileManager.default.fileExists(atPath: keyFile.path) {
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: keyFile)
        }
        let certs = server.directory.appendingPathComponent(name)
        let (process, port) = try await startListening { port in
            try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "apns-sim", "--redis-url", server.url, "--port", String(port), "--team-id", Self.teamID, "--key-id", Self.keyID,
                    "--key-file", keyFile.path, "--topic", Self.topic, "--cert-dir", certs.path, "--no-forward", "--log-requests",
                ] + arguments, logFile: server.directory.appendingPathComponent("\(name)-sim.log"))
        }
        return Simulator(
            process: process,
            workerArguments: [
                "--apns-url", "https://127.0.0.1:\(port)", "--apns-ca-file", certs.appendingPathComponent("ca.pem").path, "--apns-topic",
                Self.topic,
                "--apns-key-file", keyFile.path, "--apns-key-id", Self.keyID, "--apns-team-id", Self.teamID,
            ], url: "https://127.0.0.1:\(port)", caFile: certs.appendingPathComponent("ca.pem"))
    }

    /// Starts `richpush fcm-sim` (logging requests, passing nothing on) with `arguments` added.
    func startFCMSim(_ arguments: [String] = []) async throws -> Simulator {
        let directory = server.directory.appendingPathComponent("fcm")
        let account = directory.appendingPathComponent("service-account.json")
        let (process, port) = try await startListening { port in
            // `--make-credentials` keeps an existing file, and the file names the simulator's port
            // (its token URL): an attempt whose port was taken meanwhile must not leave its port
            // there for the next one (the worker would fetch tokens from whatever listens on it).
            if FileManager.default.fileExists(atPath: account.path) { try FileManager.default.removeItem(at: account) }
            return try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "fcm-sim", "--redis-url", server.url, "--port", String(port), "--service-account", account.path, "--make-credentials",
                    "--cert-dir", directory.path, "--no-forward", "--log-requests",
                ] + arguments, logFile: server.directory.appendingPathComponent("fcm-sim.log"))
        }
        return Simulator(
            process: process,
            workerArguments: [
                "--fcm-credentials", account.path, "--fcm-url", "https://127.0.0.1:\(port)", "--fcm-ca-file",
                directory.appendingPathComponent("ca.pem").path,
            ])
    }

    /// Starts `richpush webpush-sim` (logging requests) with `arguments` added; the worker flags
    /// that reach it (its CA), and its origin.
    func startWebPushSim(_ arguments: [String] = []) async throws -> Simulator {
        let directory = server.directory.appendingPathComponent("webpush")
        let (process, port) = try await startListening { port in
            try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "webpush-sim", "--port", String(port), "--cert-dir", directory.path, "--log-requests",
                ] + arguments, logFile: server.directory.appendingPathComponent("webpush-sim.log"))
        }
        return Simulator(
            process: process, workerArguments: ["--webpush-ca-file", directory.appendingPathComponent("ca.pem").path],
            url: "https://127.0.0.1:\(port)", caFile: directory.appendingPathComponent("ca.pem"))
    }

    /// Starts `richpush device-sim` for alice (password `alice-pw`, as ``Pipeline`` makes her)
    /// against the API at `api`, events as JSON lines, with `arguments` added.
    func startDeviceSim(api: URL, _ arguments: [String], name: String = "device-sim") async throws -> ChildProcess {
        track(
            try await ChildProcess(
                executable: try richpushExecutable(),
                arguments: [
                    "device-sim", "--redis-url", server.url, "--hub-prefix", prefix, "--api", api.absoluteString, "--user", "alice",
                    "--format", "json",
                ] + arguments, environment: ["RICHPUSH_PASSWORD": "alice-pw"],
                logFile: server.directory.appendingPathComponent("\(name).log")))
    }

    /// Starts one `richpush worker` per name, consuming this prefix's queue through `adapter`.
    /// Returns once each worker runs (its metrics server listens: its service group, and with it
    /// its SIGTERM handling, is up), so that the test's end stops it gracefully: a worker a fast
    /// test stopped while it was still starting died of the signal (exit 143).
    func startWorkers(_ names: [String], adapter: String, _ arguments: [String]) async throws -> [ChildProcess] {
        var workers: [ChildProcess] = []
        let metrics = arguments.contains("--metrics-port") ? [] : ["--metrics-port", "0"]
        for name in names {
            workers.append(
                track(
                    try await ChildProcess(
                        executable: try richpushExecutable(),
                        arguments: [
                            "worker", "--redis-url", server.url, "--queue-prefix", prefix, "--consumer", name, "--log-level", "warning",
                            "--adapter", adapter,
                        ] + metrics + arguments, logFile: server.directory.appendingPathComponent("\(name).log"))))
        }
        for worker in workers { _ = try await WorkerMetricsTests.metricsPort(of: worker) }
        return workers
    }

    /// A JSON-lines log, parsed (lines that are not JSON objects are passed over).
    static func lines(_ log: String) -> [[String: Any]] {
        log.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}

/// The processes a ``NativeProcesses`` started, in order.
final class StartedProcesses: Sendable {
    private let list = Mutex<[ChildProcess]>([])
    func add(_ process: ChildProcess) { list.withLock { $0.append(process) } }
    var all: [ChildProcess] { list.withLock { $0 } }
}
