/// A push platform, as the seed's `Platform` field names it.
package enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case apns, gcm, fcm, wns, mpns
    /// A browser's push subscription (RFC 8030): the handle is its endpoint URL, and the
    /// installation carries the subscription's keys.
    case webpush

    /// Parses the seed's spelling (case-insensitive), and `browser`, Azure Notification Hubs'
    /// name for Web Push; nil for anything else.
    package init?(seedName: String) {
        let name = seedName.lowercased()
        self.init(rawValue: name == "browser" ? "webpush" : name)
    }
}
