/// Everything `richpush api` can be told, with production defaults.
public struct APIConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var auth: AuthConfiguration
    /// Largest payload accepted, in bytes (img, sound, ...).
    public var maxPayloadBytes: Int
    /// Largest request body accepted (the payload plus JSON/multipart overhead).
    public var maxBodyBytes: Int { maxPayloadBytes * 4 / 3 + 64 * 1024 }
    /// Records and payloads are kept this long.
    public var retention: Duration
    /// Jobs accepted but not finished above which new notifications get 503 with Retry-After.
    public var maxBacklog: Int
    /// The image sent by `POST /api/notifications` with no body (the tutorial's behaviour).
    public var defaultImage: [UInt8]?
    /// Serves `GET /bench/hello`, the ceiling scripts/bench-api.sh compares against.
    public var benchRoutes: Bool

    public init(host: String = "127.0.0.1", port: Int = 8080, auth: AuthConfiguration = AuthConfiguration(),
                maxPayloadBytes: Int = 5 * 1024 * 1024, retention: Duration = .seconds(7 * 86400), maxBacklog: Int = 1_000_000,
                defaultImage: [UInt8]? = nil, benchRoutes: Bool = false) {
        self.host = host
        self.port = port
        self.auth = auth
        self.maxPayloadBytes = maxPayloadBytes
        self.retention = retention
        self.maxBacklog = maxBacklog
        self.defaultImage = defaultImage
        self.benchRoutes = benchRoutes
    }
}
