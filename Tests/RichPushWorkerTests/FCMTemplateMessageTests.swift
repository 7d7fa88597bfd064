import Testing

@testable import RichPushWorker

/// An FCM template written as FCM HTTP v1's whole request (`{"message": {…}}`, Notification Hubs'
/// documented form) is sent as that message, not wrapped in a second one.
@Suite("FCM template messages")
struct FCMTemplateMessageTests {
    @Test func aRequestBodyIsReadAsItsMessage() {
        let request = Array(#"{"message":{"data":{"title":"Goal!"},"android":{"priority":"HIGH"}}}"#.utf8)
        let message = String(decoding: TemplatePushes.message(in: request), as: UTF8.self)
        #expect(message.hasPrefix("{") && !message.contains("\"message\""), "\(message)")
        #expect(message.contains(#""data":{"title":"Goal!"}"#) && message.contains(#""android":{"priority":"HIGH"}"#))
        for kept in [#"{"data":{"message":"hi"}}"#, #"{"message":"text","data":{}}"#, #"{"message":"text"}"#] {
            #expect(TemplatePushes.message(in: Array(kept.utf8)) == Array(kept.utf8), "\(kept) is a message already")
        }
    }
}
