package import ArgumentParser
import Foundation
import Hiredis
package import Hummingbird
import Logging
import Metrics
import Prometheus
package import RichPushAPI
import RichPushApps
import RichPushCore
import ServiceLifecycle

/// `richpush api`: the HTTP API.
package struct APICommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API: authentication, device registration, rich notifications, status, metrics.",
        discussion: "All state is in Redis: run as many replicas as you like behind a load balancer.")

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port = 8080
    @Option(help: "bcrypt: users from `richpush users`; demo: the tutorial's user-name-equals-password check (never in production).")
    var authMode: AuthConfiguration.Mode = .bcrypt
    @Option(help: "Largest payload accepted, in bytes.") var maxPayloadBytes = 5 * 1024 * 1024
    @Option(help: "Largest body of POST /api/notifications/batch (up to 1,000 notifications), in bytes.") var maxBatchBodyBytes = 16 << 20
    @Option(help: "Batches (POST /api/notifications/batch) worked on at once.") var batchConcurrency = 4
    @Option(help: "Batches that may wait for one of those; more get 503 + Retry-After.") var batchQueue = 64
    @Option(help: "Days notifications and payloads are kept.") var retentionDays: Double = 7
    @Option(help: "Queue backlog above which new notifications get 503 + Retry-After.") var maxBacklog = 1_000_000
    @Option(help: "Image sent by a POST /api/notifications with no body (default: a bundled PNG).") var defaultImage: String?
    @Option(help: "Connections to Redis shared by all requests.") var redisConnections = 4
    @Option(
        help:
            "bcrypt cost of the users' hashes (`users add --cost`): unknown names are checked against a decoy of this cost until a stored hash is verified, then of that hash's cost."
    )
    var bcryptCost = 12
    @Option(help: "bcrypt checks run at once.") var bcryptConcurrency = 2
    @Option(help: "bcrypt checks that may wait; more get 503 + Retry-After.") var bcryptQueue = 64
    @Option(help: "Failed logins of one (user, address) pair before delays of 1, 2, 4, … s start.") var loginFreeFailures = 5
    @Option(help: "Failed logins from one address (any user) before delays start.") var loginFreeFailuresPerAddress = 100
    @Option(help: "Notifications one user may create per minute, sustained (0: no limit).") var quotaNotificationsPerMinute = 600
    @Option(
        help:
            "Notifications one user may create at once; past them, one more each 1/N minute for a per-minute quota of N (default: 100, or the per-minute quota if smaller)."
    ) var quotaNotificationsBurst: Int?
    @Option(help: "Payload bytes one user may keep within the retention (0: no limit).") var quotaPayloadBytes = 256 << 20
    @Option(help: "Registrations one user may own (0: no limit).") var quotaRegistrations = 100
    @Option(help: "Distinct tags over one user's registrations (0: no limit).") var quotaTags = 100
    @Option(
        help:
            "Seconds a connection may take to send a complete request head after opening or after its previous response (idle and slow headers)."
    ) var idleTimeout: Double = 30
    @Option(help: "Seconds a request body may take to arrive after its head (the connection is closed after).") var bodyTimeout: Double = 30
    @Option(
        help:
            "primary: a notification is acknowledged once the master has it; replicated: once --durability-replicas replicas have it too (WAIT), else 503 + Retry-After."
    )
    var durability: DurabilityMode = .primary
    @Option(help: "Replicas that must acknowledge a notification with --durability replicated.") var durabilityReplicas = 1
    @Option(help: "Milliseconds to wait for them before answering 503.") var durabilityTimeoutMs = 500
    @Flag(help: "Let webhooks name loopback and private addresses (receivers on your own network, development); link-local stays refused.")
    var webhookAllowPrivate = false
    @Option(
        help: ArgumentHelp(
            """
            Load balancers (CIDR ranges or addresses, comma-separated: 10.0.0.0/8,fd00::/8) whose X-Forwarded-For names the client \
            (env RICHPUSH_TRUSTED_PROXIES). Only from these peers is the client (what per-address login limits count) taken from the header: \
            its right-most address that is not itself a trusted proxy. Default: none; the peer is the client and the header is ignored.
            """, valueName: "cidr,…"))
    var trustedProxies: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: Logger.Level = .info
    @Option(
        help:
            "File holding the operator's token for /api/apps (32+ characters; env RICHPUSH_OPERATOR_TOKEN_FILE). Without it those routes are off."
    )
    var operatorTokenFile: String?
    @OptionGroup var kek: KeyEncryptionOptions
    @OptionGroup var console: ConsoleOptions
    @Option(
        help:
            "Serve Azure Notification Hubs' interface on this port too, over HTTPS (docs/nh.md; needs --nh-tls-cert-file, --nh-tls-key-file and a key-encryption key)."
    )
    var nhPort: Int?
    @Option(help: "PEM file of the NH listener's certificate chain.") var nhTlsCertFile: String?
    @Option(help: "PEM file of the NH listener's private key.") var nhTlsKeyFile: String?

    /// `--trusted-proxies`, else RICHPUSH_TRUSTED_PROXIES, else none.
    var proxies: TrustedProxies {
        get throws {
            do {
                return try TrustedProxies(parsing: trustedProxies ?? ProcessInfo.processInfo.environment["RICHPUSH_TRUSTED_PROXIES"] ?? "")
            } catch {
                throw ValidationError("--trusted-proxies (or RICHPUSH_TRUSTED_PROXIES): \(error)")
            }
        }
    }

    package init() {}

    package func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard maxPayloadBytes > 0, maxBatchBodyBytes > 0 else {
            throw ValidationError("--max-payload-bytes and --max-batch-body-bytes must be positive")
        }
        guard retentionDays > 0 else { throw ValidationError("--retention-days must be positive") }
        guard maxBacklog > 0 else { throw ValidationError("--max-backlog must be positive") }
        guard (1...64).contains(redisConnections) else { throw ValidationError("--redis-connections must be 1 to 64") }
        guard (4...31).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be 4 to 31") }
        guard batchConcurrency >= 1, batchQueue >= 0 else {
            throw ValidationError("--batch-concurrency must be positive and --batch-queue not negative")
        }
        guard bcryptConcurrency >= 1, bcryptQueue >= 0 else {
            throw ValidationError("--bcrypt-concurrency must be positive and --bcrypt-queue not negative")
        }
        guard loginFreeFailures >= 1, loginFreeFailuresPerAddress >= 1 else {
            throw ValidationError("--login-free-failures(-per-address) must be positive")
        }
        guard [quotaNotificationsPerMinute, quotaPayloadBytes, quotaRegistrations, quotaTags].allSatisfy({ $0 >= 0 }) else {
            throw ValidationError("quotas must be 0 (no limit) or positive")
        }
        guard quotaNotificationsBurst.map({ $0 >= 1 }) ?? true else {
            throw ValidationError("--quota-notifications-burst must be positive")
        }
        guard (1...16).contains(durabilityReplicas), (1...60_000).contains(durabilityTimeoutMs) else {
            throw ValidationError("--durability-replicas must be 1 to 16 and --durability-timeout-ms 1 to 60000")
        }
        guard idleTimeout > 0, bodyTimeout > 0 else { throw ValidationError("--idle-timeout and --body-timeout must be positive") }
        _ = try proxies
        if let nhPort {
            guard (0...65535).contains(nhPort), nhPort != port || nhPort == 0 else {
                throw ValidationError("--nh-port must be 0 to 65535, not --port")
            }
            guard let nhTlsCertFile, let nhTlsKeyFile else {
                throw ValidationError("--nh-port needs --nh-tls-cert-file and --nh-tls-key-file")
            }
            for file in [nhTlsCertFile, nhTlsKeyFile] where !FileManager.default.isReadableFile(atPath: file) {
                throw ValidationError("\(file) (NH listener) is not a readable file")
            }
        } else if nhTlsCertFile != nil || nhTlsKeyFile != nil {
            throw ValidationError("--nh-tls-cert-file and --nh-tls-key-file go with --nh-port")
        }
        if let defaultImage, !FileManager.default.isReadableFile(atPath: defaultImage) {
            throw ValidationError("--default-image \(defaultImage) is not a readable file")
        }
    }

    package func run() async throws {
        try await run { _ in }
    }

    /// Runs the API with the routes `extraRoutes` adds beside its own (`richpush-bench api`:
    /// `GET /bench/hello`).
    package func run(extraRoutes: @escaping @Sendable (Router<APIRequestContext>) -> Void) async throws {
        LogSetup.bootstrap(level: logLevel)
        let registry = MetricsSetup.bootstrap()
        let logger = Logger(label: "richpush.api")
        let backend = try redis.backend(clientName: "richpush-api", connections: redisConnections, logger: logger)
        let pool = backend.client
        try await SchemaCheck.atStart(redis: pool, keys: queue.storageKeys(redis), logger: logger)
        let image = try defaultImage.map { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        let auth = AuthConfiguration(
            mode: authMode,
            throttle: LoginThrottle(freeFailuresPerPair: loginFreeFailures, freeFailuresPerAddress: loginFreeFailuresPerAddress),
            bcryptCost: bcryptCost, bcryptConcurrency: bcryptConcurrency, bcryptQueueLimit: bcryptQueue)
        let quotas = APIConfiguration.Quotas(
            notificationsPerMinute: quotaNotificationsPerMinute, notificationsBurst: quotaNotificationsBurst,
            payloadBytes: quotaPayloadBytes,
            registrations: quotaRegistrations, tags: quotaTags)
        var configuration = APIConfiguration(
            host: host, port: port, auth: auth, maxPayloadBytes: maxPayloadBytes,
            retention: .seconds(retentionDays * 86400), maxBacklog: maxBacklog, defaultImage: image,
            quotas: quotas, idleTimeout: .seconds(idleTimeout), bodyTimeout: .seconds(bodyTimeout))
        configuration.maxBatchBodyBytes = maxBatchBodyBytes
        configuration.batchConcurrency = batchConcurrency
        configuration.batchQueueLimit = batchQueue
        configuration.webhookAllowPrivate = webhookAllowPrivate
        configuration.trustedProxies = try proxies
        configuration.console = console.configuration
        if durability == .replicated {
            configuration.durability = .replicated(replicas: durabilityReplicas, timeout: .milliseconds(durabilityTimeoutMs))
        }
        // Announced with PUBLISH, which a cluster passes to every node: any node will do.
        var changesNode = try redis.configuration(clientName: "richpush-api")
        if redis.isCluster { changesNode = try await backend.locator.configuration(forKey: queue.storageKeys(redis).credentialChanges) }
        let changes = RedisSubscriber(configuration: changesNode, logger: logger)
        configuration.operatorToken = try operatorToken()
        let ring = try kek.ring()
        if configuration.operatorToken != nil, ring == nil {
            throw CLIError(
                "--operator-token-file needs a key-encryption key to seal app credentials: " + AppError.noKeyEncryptionKey.description)
        }
        let apps = RedisAppStore(redis: pool, keys: AppKeys(prefix: queue.prefix), ring: ring)
        if ring != nil { try await AppKeyRingCheck.atStart(apps, logger: logger) }
        var dependencies = APIDependencies.redis(
            redis: pool, keys: queue.storageKeys(redis), queue: queue.configuration, configuration: configuration,
            registry: registry, credentialChanges: changes)
        dependencies.apps = apps
        let app = buildApplication(configuration: configuration, dependencies: dependencies, extraRoutes: extraRoutes, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: backend.service), .init(service: app)]
        if let nhPort, let nhTlsCertFile, let nhTlsKeyFile {
            guard ring != nil else {
                throw CLIError(
                    "--nh-port needs a key-encryption key to open the apps' NH rules: " + AppError.noKeyEncryptionKey.description)
            }
            dependencies.nhRules = { app in try await apps.nhRules(id: app)?.rules }
            let listener = NHListener(host: host, port: nhPort, certificateFile: nhTlsCertFile, keyFile: nhTlsKeyFile)
            do {
                services.append(
                    .init(
                        service: try buildNHApplication(
                            listener: listener, configuration: configuration, dependencies: dependencies, logger: logger)))
            } catch let error as NHSetupError {
                throw CLIError(error.description)
            }
        }
        // Stopped in reverse order: the servers drain first, the Redis pool closes last.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

extension APICommand {
    /// `--operator-token-file`, else RICHPUSH_OPERATOR_TOKEN_FILE, else none.
    func operatorToken() throws -> OperatorToken? {
        guard let file = operatorTokenFile ?? ProcessInfo.processInfo.environment["RICHPUSH_OPERATOR_TOKEN_FILE"] else { return nil }
        let text = try AppCredentialOptions.read(file, flag: "--operator-token-file", limit: 1024)
        if let problem = OperatorToken.problem(text) { throw CLIError("--operator-token-file \(file): \(problem)") }
        return OperatorToken(text: text)
    }
}

extension AuthConfiguration.Mode: ExpressibleByArgument {}

/// `--durability`.
enum DurabilityMode: String, ExpressibleByArgument, CaseIterable {
    case primary, replicated
}
