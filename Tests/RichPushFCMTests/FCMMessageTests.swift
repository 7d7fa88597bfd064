import Foundation
import RichPushCore
import RichPushFCM
import Testing

/// The Android form of a rich push: a high-priority data message FCM v1 accepts.
@Suite("FCM messages")
struct FCMMessageTests {
    static func notification(message: String = "Check this image out!") -> RichNotification {
        RichNotification(
            id: 42, message: message, richType: .image, contentType: "image/png", payloadHash: "h", payloadSize: 3,
            creator: "alice", target: "username:alice", createdAt: 0)
    }

    /// No collapse key of ours: FCM keeps only 4 per offline device (a sender's own is sent).
    @Test func aDataMessageWithHighPriorityAndTTLAndNoCollapseKey() throws {
        let message = try Self.message(Self.notification(), ttl: .seconds(86400))
        let body = try message.body(token: "fcm-token_1:APA91b")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let inner = try #require(json["message"] as? [String: Any])
        #expect(inner["token"] as? String == "fcm-token_1:APA91b")
        #expect(inner["data"] as? [String: String] == ["richId": "42", "richMessage": "Check this image out!", "richType": "img"])
        #expect(inner["android"] as? [String: String] == ["priority": "HIGH", "ttl": "86400s"])
        #expect(Set(inner.keys) == ["token", "data", "android"])
    }

    static func message(_ notification: RichNotification, ttl: Duration = .seconds(60)) throws -> FCMMessage {
        try FCMMessage(rest: PushRenderer(timeToLive: ttl).renderFCM(notification, collapseID: "42").payload)
    }

    @Test func whatFCMWouldRefuseIsNeverSent() throws {
        let tooLong = String(repeating: "x", count: 4100)
        #expect(throws: RenderError.self) { _ = try PushRenderer().renderFCM(Self.notification(message: tooLong), collapseID: "42") }
        // FCM keeps a message at most 28 days: a longer time to live is capped.
        let capped = try PushRenderer(timeToLive: .seconds(40 * 86400)).renderFCM(Self.notification(), collapseID: "42")
        #expect(String(decoding: capped.payload, as: UTF8.self).contains(#""ttl":"2419200s""#))
        #expect(throws: FCMRejection.self) { _ = try FCMMessage(rest: Array("not an object".utf8)) }
        let message = try Self.message(Self.notification())
        for token in ["", "has space", "quote\"", String(repeating: "a", count: 4097)] {
            #expect(throws: FCMRejection.self, "\(token.prefix(10))") { _ = try message.body(token: token) }
        }
    }

    @Test func messageTextIsEscaped() throws {
        let message = try Self.message(Self.notification(message: "a \"quoted\"\nline\\"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try message.body(token: "t"))) as? [String: Any])
        #expect(((json["message"] as? [String: Any])?["data"] as? [String: String])?["richMessage"] == "a \"quoted\"\nline\\")
    }
}

extension FCMMessageTests {
    /// The alert mode: a notification message the system shows, with the fetch URL in data for
    /// More, and no image (the system would fetch it without the user's credentials).
    @Test func theAlertModeIsANotificationMessage() throws {
        let rendered = try PushRenderer(mode: .alert, apiBaseURL: "https://push.example.com").renderFCM(
            Self.notification(), collapseID: "42")
        #expect(rendered.pushType == "notification")
        let inner = try #require(
            (try JSONSerialization.jsonObject(with: Data(try FCMMessage(rest: rendered.payload).body(token: "t"))) as? [String: Any])?[
                "message"] as? [String: Any])
        #expect(inner["notification"] as? [String: String] == ["title": "Notification", "body": "Check this image out!"])
        #expect((inner["data"] as? [String: String])?["richUrl"] == "https://push.example.com/api/notifications/42")
        #expect((inner["android"] as? [String: Any])?["notification"] as? [String: String] == ["click_action": "richPush"])
    }
}

extension FCMMessageTests {
    /// The sender's ttl (from creation), collapse id and priority, each in its platform's terms.
    @Test func deliveryOptionsReachBothPlatforms() throws {
        var notification = Self.notification()
        notification.createdAt = 1_800_000_000_000
        notification.delivery = DeliveryOptions(ttl: .seconds(600), collapseID: "order-1", priority: .normal)
        let now = Date(timeIntervalSince1970: 1_800_000_100)
        let fcm = try PushRenderer().renderFCM(notification, collapseID: "42", now: now)
        let android = try #require(
            (try JSONSerialization.jsonObject(with: Data(fcm.payload)) as? [String: Any])?["android"] as? [String: String])
        #expect(android == ["collapse_key": "order-1", "priority": "NORMAL", "ttl": "500s"])
        #expect(fcm.expiration == 1_800_000_600 && fcm.collapseID == "order-1")
        // APNs: the same deadline; a background push stays priority 5, an alert follows the sender.
        let silent = try PushRenderer().render(notification, collapseID: "42", now: now)
        #expect(silent.expiration == 1_800_000_600 && silent.collapseID == "order-1" && silent.priority == 5)
        #expect(try PushRenderer(mode: .alert).render(notification, collapseID: "42", now: now).priority == 5)
        notification.delivery.priority = .high
        #expect(try PushRenderer(mode: .alert).render(notification, collapseID: "42", now: now).priority == 10)
        // Past its deadline: zero, deliver now or never.
        let late = Date(timeIntervalSince1970: 1_800_001_000)
        #expect(try PushRenderer().renderFCM(notification, collapseID: "42", now: late).expiration == 1_800_001_000)
        #expect(
            String(decoding: try PushRenderer().renderFCM(notification, collapseID: "42", now: late).payload, as: UTF8.self).contains(
                #""ttl":"0s""#))
        // Without options: no collapse key (the app drops a richId it has shown), a day, high.
        let plain = try PushRenderer().renderFCM(Self.notification(), collapseID: "42", now: now)
        #expect(String(decoding: plain.payload, as: UTF8.self).contains(#"{"android":{"priority":"HIGH","ttl":"86400s"}"#))
        #expect(plain.collapseID == "")
    }
}

extension FCMMessageTests {
    /// FCM counts `ttl` in whole seconds and rounds a fraction down: the rendering rounds what is
    /// left up, so FCM never drops the push before creation + ttl; the hub's deadline is exact.
    @Test(arguments: [
        (created: Int64(1_800_000_000_500), now: 1_800_000_000.6, ttl: "3s", deadline: Int64(1_800_000_003_500)),
        (created: 1_800_000_000_999, now: 1_800_000_001.0, ttl: "3s", deadline: 1_800_000_003_999),
        (created: 1_800_000_000_000, now: 1_800_000_000.0, ttl: "3s", deadline: 1_800_000_003_000),
        (created: 1_800_000_000_250, now: 1_800_000_003.2, ttl: "1s", deadline: 1_800_000_003_250),
    ])
    func theTTLIsNeverShorterThanWhatIsLeft(created: Int64, now: Double, ttl: String, deadline: Int64) throws {
        var notification = Self.notification()
        notification.createdAt = created
        notification.delivery = DeliveryOptions(ttl: .seconds(3))
        let rendered = try PushRenderer().renderFCM(notification, collapseID: "42", now: Date(timeIntervalSince1970: now))
        let android = try #require(
            (try JSONSerialization.jsonObject(with: Data(rendered.payload)) as? [String: Any])?["android"] as? [String: String])
        #expect(android["ttl"] == ttl)
        #expect(rendered.deadline == deadline)
        #expect(rendered.expiration == Int((deadline + 999) / 1000))
    }
}
