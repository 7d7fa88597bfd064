package import RichPushCore
package import RichPushStorage

/// Everything `richpush api` can be told, with production defaults.
package struct APIConfiguration: Sendable {
    package var host: String
    package var port: Int
    package var auth: AuthConfiguration
    /// Largest payload accepted, in bytes (img, sound, ...).
    package var maxPayloadBytes: Int
    /// Largest request body accepted (the payload plus JSON/multipart overhead).
    package var maxBodyBytes: Int { maxPayloadBytes * 4 / 3 + 64 * 1024 }
    /// Largest body of `POST /api/notifications/batch` (up to 1,000 notifications), bounded on
    /// its own: a batch of small pushes is larger than one push, yet must not be unbounded.
    package var maxBatchBodyBytes: Int = 16 << 20
    /// Batches this process works on at once, and how many more may wait for one of them; more
    /// get 503 + `Retry-After`. A batch holds its body and its parsed items (up to
    /// `maxBatchBodyBytes` and 1,000 drafts) while it runs: this bounds the memory they take.
    package var batchConcurrency = 4
    package var batchQueueLimit = 64
    /// Records and payloads are kept this long.
    package var retention: Duration
    /// Jobs accepted but not finished above which new notifications get 503 with Retry-After.
    package var maxBacklog: Int
    /// The image sent by `POST /api/notifications` with no body (the tutorial's behaviour).
    package var defaultImage: [UInt8]?
    /// What one user may hold and send.
    package var quotas: Quotas
    /// A connection that completes no request head this long after it opened or after its
    /// previous response is closed (idle keep-alive and slow headers alike).
    package var idleTimeout: Duration
    /// A connection whose request body has not fully arrived this long after its head is closed.
    package var bodyTimeout: Duration
    /// Lets webhooks name loopback and private addresses (a development setup, or receivers on
    /// the operator's own network); link-local addresses stay refused.
    package var webhookAllowPrivate: Bool = false
    /// `replicated`: a notification is acknowledged (202) only once a replica has it too.
    package var durability: Durability = .primary
    /// Load balancers whose `X-Forwarded-For` names the client (for the per-address login
    /// throttle); none: the peer is the client.
    package var trustedProxies = TrustedProxies()
    /// The operator's token for `/api/apps`; nil turns those routes off (403 saying so).
    package var operatorToken: OperatorToken?
    /// The operator's console (`/console`).
    package var console = ConsoleConfiguration()

    /// Per-user limits; 0 turns one off. Over a limit: 429 with `Retry-After`, code `quota_exceeded`.
    package struct Quotas: Sendable, Hashable {
        /// Notifications one user may create per minute, sustained.
        package var notificationsPerMinute: Int
        /// Notifications one user may create at once (the token bucket's size); the rest wait for
        /// the bucket to refill at the per-minute rate. Nil: 100, or the per-minute figure if smaller.
        package var notificationsBurst: Int?
        /// Payload bytes of one user's notifications still within the retention.
        package var payloadBytes: Int
        /// Registrations (installations) one user may own.
        package var registrations: Int
        /// Distinct tags over all of one user's registrations (their `username:` tag included).
        package var tags: Int

        package init(
            notificationsPerMinute: Int = 600, notificationsBurst: Int? = nil, payloadBytes: Int = 256 << 20, registrations: Int = 100,
            tags: Int = 100
        ) {
            self.notificationsPerMinute = notificationsPerMinute
            self.notificationsBurst = notificationsBurst
            self.payloadBytes = payloadBytes
            self.registrations = registrations
            self.tags = tags
        }

        /// What a user's notification is charged against.
        package var notificationLimits: QuotaLimits {
            QuotaLimits(
                perMinute: notificationsPerMinute, burst: notificationsBurst ?? min(100, notificationsPerMinute), liveBytes: payloadBytes)
        }
    }

    package init(
        host: String = "127.0.0.1", port: Int = 8080, auth: AuthConfiguration = AuthConfiguration(),
        maxPayloadBytes: Int = 5 * 1024 * 1024, retention: Duration = .seconds(7 * 86400), maxBacklog: Int = 1_000_000,
        defaultImage: [UInt8]? = nil, quotas: Quotas = Quotas(),
        idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.auth = auth
        self.maxPayloadBytes = maxPayloadBytes
        self.retention = retention
        self.maxBacklog = maxBacklog
        self.defaultImage = defaultImage
        self.quotas = quotas
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
    }
}
