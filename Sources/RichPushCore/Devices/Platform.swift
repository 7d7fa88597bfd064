/// A push platform, as the seed's `Platform` field names it.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case apns, gcm, fcm, wns, mpns

    /// Parses the seed's spelling (case-insensitive); nil for anything else.
    public init?(seedName: String) {
        self.init(rawValue: seedName.lowercased())
    }
}
