/// How a notification's pushes should travel, as its sender asked (`ttl`, `collapseId`,
/// `priority`, `delivery` on `POST /api/notifications`); each adapter says it in its platform's
/// terms. Unset fields keep the defaults (the renderer's time to live, the notification id as
/// collapse id, the push mode's priority, the workers' push mode).
package struct DeliveryOptions: Sendable, Hashable, Codable {
    package enum Priority: String, Sendable, Hashable, Codable, CaseIterable {
        case high, normal
    }

    /// How long the platform keeps trying an offline device, counted from the notification's creation.
    package var ttl: Duration?
    /// Pushes with the same collapse id replace each other on the device.
    package var collapseID: String?
    package var priority: Priority?
    /// At most this many of its pushes a minute (so devices fetch the payload at that rate).
    package var throttlePerMinute: Int?
    /// Silent (the app fetches in the background) or alert (shown, with the fetch URL for a
    /// notification service extension): nil is the workers' `--push-mode`.
    package var mode: PushRenderer.Mode?

    /// FCM keeps a message at most 28 days; APNs has no stated limit, so the stricter one holds.
    package static let maxTTL: Duration = .seconds(28 * 86400)
    /// APNs' limit on `apns-collapse-id`.
    package static let maxCollapseIDBytes = 64

    package static let maxThrottlePerMinute = 10_000_000

    package init(
        ttl: Duration? = nil, collapseID: String? = nil, priority: Priority? = nil, throttlePerMinute: Int? = nil,
        mode: PushRenderer.Mode? = nil
    ) {
        self.throttlePerMinute = throttlePerMinute
        self.mode = mode
        self.ttl = ttl
        self.collapseID = collapseID
        self.priority = priority
    }

    package var isEmpty: Bool { ttl == nil && collapseID == nil && priority == nil && throttlePerMinute == nil && mode == nil }

    /// Why these options cannot be used, or nil.
    package var problem: String? {
        if let ttl, ttl < .zero || ttl > Self.maxTTL { return "'ttl' must be 0 to \(Self.maxTTL.components.seconds) seconds (28 days)" }
        if let collapseID, !(1...Self.maxCollapseIDBytes).contains(collapseID.utf8.count) {
            return "'collapseId' must be 1 to \(Self.maxCollapseIDBytes) bytes"
        }
        return nil
    }
}
