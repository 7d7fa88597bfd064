/// A device registered for pushes: the seed's registration (`PUT /api/register/{id}`).
public struct Installation: Sendable, Hashable, Codable {
    /// Random, unguessable id (the seed's registration id).
    public var id: String
    public var platform: Platform
    /// The platform's push token (APNs device token, FCM registration token, ...).
    public var handle: String
    /// Tags, always including `username:<owner>`.
    public var tags: [String]
    /// The user who registered it; only they may change or delete it.
    public var owner: String
    /// Milliseconds since 1970.
    public var updatedAt: Int64

    public init(id: String, platform: Platform, handle: String, tags: [String], owner: String, updatedAt: Int64) {
        self.id = id
        self.platform = platform
        self.handle = handle
        self.tags = tags
        self.owner = owner
        self.updatedAt = updatedAt
    }

    /// The tag the backend adds to every registration of `user` (the seed's rule).
    public static func userTag(_ user: String) -> String { "username:\(user)" }
}
