import Foundation
import RichPushCore
import Testing

/// The browser's form of a rich push: the JSON its service worker decrypts, within one Web Push
/// record, with the notification's remaining life as TTL and the sender's collapse id as Topic.
@Suite("Rendering for Web Push")
struct WebPushRenderingTests {
    @Test(arguments: RenderingTests.messages, PushRenderer.Mode.allCases)
    func theMessageIsTheServiceWorkersJSON(message: String, mode: PushRenderer.Mode) throws {
        let renderer = PushRenderer(mode: mode, apiBaseURL: "http://api.example")
        let rendered = try renderer.render(RenderingTests.notification(message), format: .webpush, collapseID: "42")
        var expected: [String: Any] = ["richId": "42", "richMessage": message, "richType": "img"]
        if mode == .alert { expected["richUrl"] = "http://api.example/api/notifications/42" }
        let written = try JSONSerialization.data(withJSONObject: expected, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(String(decoding: rendered.payload, as: UTF8.self) == String(decoding: written, as: UTF8.self))
        // Only a sender's collapse id becomes a Topic; the notification id does not.
        #expect(rendered.collapseID == "")
    }

    @Test func ttlPriorityAndTopicComeFromTheNotification() throws {
        var notification = RenderingTests.notification("hi")
        notification.delivery.collapseID = "score"
        notification.delivery.priority = .normal
        let rendered = try PushRenderer().renderWebPush(notification, now: Date(timeIntervalSince1970: 1000))
        #expect(rendered.collapseID == "score" && rendered.priority == 5)
        #expect(rendered.expiration == 1000 + 86400)
    }

    /// RFC 8030 §5.3: `high` is for time-sensitive messages; an ordinary notification is
    /// `normal` (priority 5, said as `Urgency: normal`) unless its sender asked for `high`.
    @Test func urgencyIsNormalUnlessTheSenderAskedForHigh() throws {
        var notification = RenderingTests.notification("hi")
        #expect(try PushRenderer().renderWebPush(notification).priority == 5, "no priority given")
        notification.delivery.priority = .normal
        #expect(try PushRenderer().renderWebPush(notification).priority == 5)
        notification.delivery.priority = .high
        #expect(try PushRenderer().renderWebPush(notification).priority == 10)
    }

    @Test func aMessageOverOneRecordIsRefusedBeforeSending() throws {
        let overhead = try PushRenderer().renderWebPush(RenderingTests.notification("")).payload.count
        let longest = String(repeating: "a", count: PushRenderer.maxWebPushPlaintextBytes - overhead)
        let fits = try PushRenderer().renderWebPush(RenderingTests.notification(longest))
        #expect(fits.payload.count == PushRenderer.maxWebPushPlaintextBytes)
        #expect(throws: RenderError.self) { _ = try PushRenderer().renderWebPush(RenderingTests.notification(longest + "a")) }
    }
}
