import APITestSupport
import HTTPTypes
import Hiredis
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushAPI
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushStorage

/// A live API on a free port over a private redis-server, with users alice and bob (role user)
/// and root (admin), each with the password "<name>-pw" (bcrypt cost 4). The in-memory suite
/// runs the same harness (``TestAPI``) on ``InMemoryAPI``.
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
        configuration = TestAPI.configuration(configure)
        try await TestAPI.addUsers(to: RedisUserStore(redis: redis, keys: keys))
    }

    /// The queue the API enqueues to.
    var jobQueue: JobQueue { JobQueue(redis: redis, configuration: queue) }

    /// The store the API writes to.
    var notifications: RedisNotificationStore {
        RedisNotificationStore(redis: redis, keys: keys, queue: jobQueue, retention: configuration.retention)
    }

    /// The ledger a worker writes to, for what a worker would do (lease a delivery, record it, ...).
    var ledger: RedisDeliveryLedger {
        RedisDeliveryLedger(redis: redis, keys: keys, retention: configuration.retention)
    }

    /// Runs `body` against the live application, on this fixture's Redis or on `redis` (a
    /// client that wraps it).
    func test<T: Sendable>(
        on redis: (any RedisClient)? = nil, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        var dependencies = APIDependencies.redis(redis: redis ?? self.redis, keys: keys, queue: queue, configuration: configuration)
        dependencies.apps = apps
        return try await TestAPI(configuration: configuration, dependencies: dependencies).test(body)
    }

    static func basic(_ user: String, _ password: String? = nil) -> HTTPFields { TestAPI.basic(user, password) }
    static func json(_ object: [String: Any]) -> ByteBuffer { TestAPI.json(object) }
    static let png = TestAPI.png
}
