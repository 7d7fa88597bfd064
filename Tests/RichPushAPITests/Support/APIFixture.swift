import Foundation
import Hiredis
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import HummingbirdTesting
import Logging
import RedisTestSupport
import RichPushAPI
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushStorage

/// A live API on a free port over a private redis-server, with users alice and bob (role user)
/// and root (admin), each with the password "<name>-pw" (bcrypt cost 4).
struct APIFixture {
    let server: RedisServer
    let redis: RedisConnectionPool
    let keys: StorageKeys
    let queue: JobQueueConfiguration
    var configuration: APIConfiguration
    /// The operator's `/api/apps` store; nil leaves those routes out, as a backend without apps would.
    var apps: (any AppStore)?

    init(server: RedisServer, configure: (inout APIConfiguration) -> Void = { _ in }) async throws {
        self.server = server
        redis = RedisConnectionPool(configuration: server.configuration, size: 2)
        let prefix = String(uniqueKeyPrefix("api").dropLast())
        keys = StorageKeys(prefix: prefix)
        queue = JobQueueConfiguration(prefix: prefix)
        var configuration = APIConfiguration(host: "127.0.0.1", port: 0, auth: AuthConfiguration(bcryptCost: 4))
        configure(&configuration)
        self.configuration = configuration
        let users = RedisUserStore(redis: redis, keys: keys)
        for (name, role) in [("alice", User.Role.user), ("bob", .user), ("root", .admin)] {
            _ = try await users.create(User(name: name, role: role), passwordHash: Bcrypt.hash("\(name)-pw", cost: 4))
        }
    }

    /// The store the API writes to.
    var notifications: RedisNotificationStore {
        RedisNotificationStore(redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: queue), retention: configuration.retention)
    }

    /// The ledger a worker writes to, for what a worker would do (lease a delivery, record it, ...).
    var ledger: RedisDeliveryLedger {
        RedisDeliveryLedger(redis: redis, keys: keys, retention: configuration.retention)
    }

    /// Runs `body` against the live application.
    func test<T: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        var logger = Logger(label: "test.api")
        logger.logLevel = .warning
        var dependencies = APIDependencies.redis(redis: redis, keys: keys, queue: queue, configuration: configuration)
        dependencies.apps = apps
        let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: logger)
        return try await app.test(.live) { client in try await body(client) }
    }

    static func basic(_ user: String, _ password: String? = nil) -> HTTPFields {
        let token = Data("\(user):\(password ?? "\(user)-pw")".utf8).base64EncodedString()
        return [.authorization: "Basic \(token)"]
    }

    static func json(_ object: [String: Any]) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 200)
}

extension TestResponse {
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String { (json["error"] as? [String: Any])?["message"] as? String ?? "" }
    var bytes: [UInt8] { Array(buffer: body) }
}

extension TestClientProtocol {
    /// Registers a device for `user` with extra tags; returns its registration id.
    func register(_ user: String, handle: String, tags: [String] = []) async throws -> String {
        let id = try await execute(uri: "/api/register?handle=\(handle)", method: .post, headers: APIFixture.basic(user)) { response in
            try JSONDecoder().decode(String.self, from: Data(buffer: response.body))
        }
        try await execute(uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic(user),
                          body: APIFixture.json(["Platform": "apns", "Handle": handle, "Tags": tags])) { response in
            guard response.status == .ok else { throw RedisServerError("register failed: \(response.status) \(String(buffer: response.body))") }
        }
        return id
    }

    /// Sends an image notification as `user`; returns the response.
    func sendImage(_ user: String, message: String = "Look", target: String? = nil, payload: [UInt8] = APIFixture.png) async throws -> TestResponse {
        var object: [String: Any] = ["message": message, "richType": "img", "payload": Data(payload).base64EncodedString()]
        if let target { object["target"] = target }
        return try await execute(uri: "/api/notifications", method: .post,
                                 headers: APIFixture.basic(user) + [.contentType: "application/json"], body: APIFixture.json(object))
    }
}

func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
    var result = lhs
    result.append(contentsOf: rhs)
    return result
}
