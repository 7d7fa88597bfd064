import Foundation
import RichPushAdapters
import RichPushCore
import RichPushHTTP2
import Testing

@testable import RichPushAPNS
@testable import RichPushFCM
@testable import RichPushWebPush

/// The bounded reason codes the console counts failed pushes by, over the failure reasons each
/// adapter really writes (made by the adapters' own mapping, so a reworded reason shows here).
@Suite("Push failure codes")
struct PushFailureCodeTests {
    static func reason(_ outcome: PushOutcome) -> String {
        switch outcome {
        case .invalidToken(let reason), .failed(let reason, _), .failedRetryAfter(let reason, _), .deferred(let reason, _),
            .deviceDeferred(let reason, _):
            reason
        case .sent, .held: "(not a failure)"
        }
    }

    static let push = OutgoingPush(
        notification: 7,
        installation: Installation(
            id: "i", platform: .apns, handle: String(repeating: "a", count: 64),
            tags: [], owner: "o", updatedAt: 0),
        rendered: RenderedPush(
            payload: Array(#"{"aps":{"content-available":1}}"#.utf8), pushType: "background",
            priority: 5, expiration: 0, collapseID: "7"))

    static func apns(_ exchange: HTTP2Exchange) throws -> String {
        let request = try APNSRequest(push: push, topic: "com.example.app")
        return reason(
            APNSPushAdapter.outcome(of: APNSPushAdapter.action(for: exchange), request: request, push: push, throttleWait: .seconds(1)))
    }

    static func apns(_ status: Int, _ body: String, retryAfter: String? = nil) throws -> String {
        try apns(.answered(status: status, responseID: nil, retryAfter: retryAfter, body: Array(body.utf8)))
    }

    static func fcm(_ exchange: HTTP2Exchange) -> String { reason(FCMPushAdapter.outcome(of: FCMPushAdapter.action(for: exchange))) }

    static func fcm(_ status: Int, _ body: String, retryAfter: String? = nil) -> String {
        fcm(.answered(status: status, responseID: nil, retryAfter: retryAfter, body: Array(body.utf8)))
    }

    static func webPush(_ status: Int, _ body: String = "", retryAfter: String? = nil) -> String {
        reason(WebPushServiceAnswer(status: status, location: nil, retryAfter: retryAfter, body: Array(body.utf8)).outcome)
    }

    static func fcmError(_ status: String, _ code: String?) -> String {
        let details =
            code.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return #"{"error":{"code":400,"message":"Some text: with a colon","status":"\#(status)"\#(details)}}"#
    }

    @Test func apnsReasonsAreApplesCodes() throws {
        #expect(PushFailureCode.code(for: try Self.apns(400, #"{"reason":"BadDeviceToken"}"#)) == "BadDeviceToken")
        #expect(PushFailureCode.code(for: try Self.apns(410, #"{"reason":"Unregistered","timestamp":1000}"#)) == "Unregistered")
        // A device registered again after Apple's timestamp: failed, not dead, still Apple's reason.
        let newer = try Self.apns(410, #"{"reason":"Unregistered","timestamp":-1000000}"#)
        #expect(newer.hasSuffix("but the registration is newer"), "\(newer)")
        #expect(PushFailureCode.code(for: newer) == "Unregistered")
        #expect(PushFailureCode.code(for: try Self.apns(503, #"{"reason":"ServiceUnavailable"}"#, retryAfter: "5")) == "ServiceUnavailable")
        #expect(PushFailureCode.code(for: try Self.apns(500, #"{"reason":"InternalServerError"}"#)) == "InternalServerError")
        #expect(PushFailureCode.code(for: try Self.apns(400, #"{"reason":"SomethingApple.Adds-Later"}"#)) == "SomethingApple.Adds-Later")
        // Not Apple's body: the status, or nothing to name.
        #expect(PushFailureCode.code(for: try Self.apns(502, "")) == "http_502")
        #expect(PushFailureCode.code(for: try Self.apns(502, "<html>Bad gateway</html>")) == "other")
        #expect(PushFailureCode.code(for: try Self.apns(.timedOut)) == "timeout")
        #expect(
            PushFailureCode.code(for: try Self.apns(.failed(reason: "the connection closed before the server answered"))) == "unreachable")
        #expect(
            PushFailureCode.code(for: try Self.apns(.unprocessed(reason: "the server refused the stream (REFUSED_STREAM)")))
                == "unreachable")
        // Refused before sending: RichPush's own check names Apple's reason.
        var large = Self.push.rendered
        large = RenderedPush(
            payload: Array(("{\"aps\":{\"content-available\":1},\"x\":\"" + String(repeating: "x", count: 5000) + "\"}").utf8),
            pushType: large.pushType, priority: large.priority, expiration: 0, collapseID: "7")
        let rejection = try #require(throws: APNSRejection.self) {
            _ = try APNSRequest(
                push: OutgoingPush(notification: 7, installation: Self.push.installation, rendered: large), topic: "com.example.app")
        }
        #expect(PushFailureCode.code(for: "never sent: \(rejection)") == "PayloadTooLarge")
        #expect(PushFailureCode.code(for: "never sent: the device token is APNs sandbox's and no sandbox service is configured") == "other")
    }

    @Test func fcmReasonsAreItsErrorCodes() {
        #expect(PushFailureCode.code(for: Self.fcm(404, Self.fcmError("NOT_FOUND", "UNREGISTERED"))) == "UNREGISTERED")
        #expect(PushFailureCode.code(for: Self.fcm(400, Self.fcmError("INVALID_ARGUMENT", "INVALID_ARGUMENT"))) == "INVALID_ARGUMENT")
        #expect(PushFailureCode.code(for: Self.fcm(403, Self.fcmError("PERMISSION_DENIED", "SENDER_ID_MISMATCH"))) == "SENDER_ID_MISMATCH")
        #expect(PushFailureCode.code(for: Self.fcm(503, Self.fcmError("UNAVAILABLE", nil), retryAfter: "3")) == "UNAVAILABLE")
        #expect(PushFailureCode.code(for: Self.fcm(500, "")) == "http_500")
        #expect(PushFailureCode.code(for: Self.fcm(.timedOut)) == "timeout")
        #expect(PushFailureCode.code(for: Self.fcm(.failed(reason: "connection reset"))) == "unreachable")
    }

    @Test func webPushReasonsAreTheStatus() {
        #expect(PushFailureCode.code(for: Self.webPush(410, #"{"errno":106,"message":"gone: expired"}"#)) == "http_410")
        #expect(PushFailureCode.code(for: Self.webPush(404)) == "http_404")
        #expect(PushFailureCode.code(for: Self.webPush(413)) == "http_413")
        #expect(PushFailureCode.code(for: Self.webPush(403, "VAPID: bad")) == "http_403")
        #expect(PushFailureCode.code(for: Self.webPush(502, "upstream", retryAfter: "4")) == "http_502")
        #expect(PushFailureCode.code(for: Self.webPush(400)) == "http_400")
        #expect(PushFailureCode.code(for: "cannot reach the push service for https://push.example: connection refused") == "unreachable")
        #expect(PushFailureCode.code(for: "the push service https://push.example did not answer in time") == "timeout")
    }

    @Test func theHubAndRoutingHaveNamesOfTheirOwn() async throws {
        #expect(PushFailureCode.code(for: "no reply from Redis") == "unreachable")
        #expect(PushFailureCode.code(for: "Redis answered 2 of 3 pushes") == "unreachable")
        let unrouted = try await UnroutedPushAdapter(configured: ["apns"]).send([Self.push])
        #expect(PushFailureCode.code(for: Self.reason(unrouted[0])) == "no_adapter")
        let refused = try await UnroutedPushAdapter(
            reason: "app 'shop' has no FCM credentials; set them with richpush apps set shop (see docs/apps.md)"
        )
        .send([Self.push])
        #expect(PushFailureCode.code(for: Self.reason(refused[0])) == "no_credentials")
        #expect(PushFailureCode.code(for: "not sent") == "unreachable")
    }

    /// Whatever the text, the code is 1–48 bytes of `[A-Za-z0-9_.-]`.
    @Test func hostileReasonsGiveABoundedCode() {
        let hostile = [
            "", " ", String(repeating: "A", count: 49), String(repeating: "A", count: 100_000), "Bad\u{0}Token", "Bad\nToken: x",
            "Ünregistered", "BadDevice🙂Token", "<script>alert(1)</script>", "\u{202E}BadDeviceToken", "A|B", "A:B:C",
            String(repeating: "A", count: 49) + ": text", "\u{7}\u{1B}[31m", "999: beyond the statuses", "HTTP 9999",
        ]
        for reason in hostile {
            let code = PushFailureCode.code(for: reason)
            #expect(PushFailureCode.isCode(code[...]), "\(reason.prefix(60).debugDescription) → \(code.debugDescription)")
        }
        #expect(PushFailureCode.code(for: String(repeating: "A", count: 48)) == String(repeating: "A", count: 48))
        #expect(PushFailureCode.code(for: String(repeating: "A", count: 49)) == "other")
        #expect(PushFailureCode.code(for: "<script>alert(1)</script>") == "other")
        #expect(PushFailureCode.code(for: "Bad\u{0}Token") == "other")
        #expect(PushFailureCode.code(for: "Ünregistered") == "other")
    }
}
