import Foundation
import RichPushCore
import RichPushStorage

/// Turns outbox entries into the events a webhook receives, and events into a delivery's body:
/// `{"deliveryId":…,"events":[…],"webhookId":…}`, each event
/// `{"at":…,"id":…,"installation":…,"notificationId":…,"type":…,"user":…}` plus what the outcome
/// says (`adapterID`, `error`, `held`) or `reader` for a fetch or receipt without an installation.
enum WebhookEvents {
    /// One event, ready to encode (keys sorted when encoded).
    typealias Event = [String: Any]

    /// The events of one entry; `id` is the entry's stream id and the item's index, stable across
    /// retries and redeliveries, so a receiver can drop repeats.
    static func events(of entry: WebhookOutboxEntry) -> [Event] {
        guard let type = entry.type,
            let items = (try? JSONSerialization.jsonObject(with: Data(entry.items))) as? [[String: Any]]
        else { return [] }
        let at = UTCTimestamp.iso8601(milliseconds: entry.at)
        return items.enumerated().map { index, item in
            var event: Event = [
                "id": "\(entry.eventIDPrefix)\(entry.streamID)/\(index)", "type": type.rawValue, "notificationId": entry.notification,
                "user": entry.creator, "at": at,
            ]
            if let installation = item["installation"] as? String { event["installation"] = installation }
            if let reader = item["reader"] as? String { event["reader"] = reader }
            if let result = item["result"] as? [String: Any] {
                if let adapterID = result["adapterID"] as? String { event["adapterID"] = adapterID }
                if let error = result["error"] as? String { event["error"] = error }
                if result["state"] as? String == DeliveryCounter.held.rawValue { event["held"] = true }
            }
            return event
        }
    }

    static func body(webhook: String, delivery: String, events: [Event]) throws -> [UInt8] {
        let object: [String: Any] = ["webhookId": webhook, "deliveryId": delivery, "events": events]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// `dlv_` and 16 hex digits.
    static func newDeliveryID() -> String {
        "dlv_" + Hex.encode(withUnsafeBytes(of: UInt64.random(in: .min ... .max).bigEndian) { Array($0) })
    }
}
