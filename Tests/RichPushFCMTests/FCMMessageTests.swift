import Foundation
import RichPushCore
import RichPushFCM
import Testing

/// The Android form of a rich push: a high-priority data message FCM v1 accepts.
@Suite("FCM messages")
struct FCMMessageTests {
    static func notification(message: String = "Check this image out!") -> RichNotification {
        RichNotification(id: 42, message: message, richType: .image, contentType: "image/png", payloadHash: "h", payloadSize: 3,
                         creator: "alice", target: "username:alice", createdAt: 0)
    }

    @Test func aDataMessageWithHighPriorityCollapseKeyAndTTL() throws {
        let message = try FCMMessage(notification: Self.notification(), collapseKey: "42", timeToLive: .seconds(86400))
        let body = try message.body(token: "fcm-token_1:APA91b")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let inner = try #require(json["message"] as? [String: Any])
        #expect(inner["token"] as? String == "fcm-token_1:APA91b")
        #expect(inner["data"] as? [String: String] == ["richId": "42", "richMessage": "Check this image out!", "richType": "img"])
        #expect(inner["android"] as? [String: String] == ["collapse_key": "42", "priority": "HIGH", "ttl": "86400s"])
        #expect(Set(inner.keys) == ["token", "data", "android"])
    }

    @Test func whatFCMWouldRefuseIsNeverSent() throws {
        let tooLong = String(repeating: "x", count: 4100)
        #expect(throws: FCMRejection.self) { _ = try FCMMessage(notification: Self.notification(message: tooLong), collapseKey: "42", timeToLive: .seconds(60)) }
        #expect(throws: FCMRejection.self) { _ = try FCMMessage(notification: Self.notification(), collapseKey: "", timeToLive: .seconds(60)) }
        #expect(throws: FCMRejection.self) { _ = try FCMMessage(notification: Self.notification(), collapseKey: "42", timeToLive: .seconds(29 * 86400)) }
        let message = try FCMMessage(notification: Self.notification(), collapseKey: "42", timeToLive: .seconds(60))
        for token in ["", "has space", "quote\"", String(repeating: "a", count: 4097)] {
            #expect(throws: FCMRejection.self, "\(token.prefix(10))") { _ = try message.body(token: token) }
        }
    }

    @Test func messageTextIsEscaped() throws {
        let message = try FCMMessage(notification: Self.notification(message: "a \"quoted\"\nline\\"), collapseKey: "42", timeToLive: .seconds(60))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try message.body(token: "t"))) as? [String: Any])
        #expect(((json["message"] as? [String: Any])?["data"] as? [String: String])?["richMessage"] == "a \"quoted\"\nline\\")
    }
}
