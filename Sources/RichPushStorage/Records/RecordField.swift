/// The fields of a notification's record (its hash, ``StorageKeys/notification(_:)``), spelled
/// once: the create writes them by these names, readers read them by name, and the scripts get
/// them as generated constants (`RECORD_CREATOR`, …). The status shares the hash with its own
/// fields (``StatusField`` and the counters), none of them named as one of these.
enum RecordField: String, CaseIterable {
    case message
    /// The rich type (`img`, `text`, …).
    case type
    case contentType
    /// The payload's content hash (the payload is stored once per hash).
    case payload
    /// The payload's size in bytes.
    case size
    /// The user who sent it.
    case creator
    /// The tag expression it was sent to.
    case target
    /// When it was created, in milliseconds since 1970.
    case created
    /// Seconds the platforms may keep it for an offline device (absent: their default).
    case ttl
    case collapse
    case priority
    /// When a scheduled send is due, in milliseconds (absent: sent at once).
    case sendAt
    /// Pushes a minute for its fan-out (absent: the worker's default).
    case throttle
    /// The template properties, as JSON (absent: none).
    case properties
    /// The properties' default language.
    case locale
    /// Its delivery: silent, alert or auto (absent: the app's or the worker's default).
    case mode
    /// The app it belongs to (absent: the default app).
    case app
    /// A native send's payload, format and headers, as JSON (absent: rendered by RichPush).
    case native
    /// `1`: NH's template send, for devices with a template only (absent: every device).
    case templatesOnly

    /// What a reader of records reads (HMGET), in this order: everything but the create's own
    /// bookkeeping (`sendAt`, which the queue holds, and `app`, which the keys say).
    static let read: [RecordField] = allCases.filter { $0 != .sendAt && $0 != .app }
}
