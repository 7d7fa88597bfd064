import Foundation
import RichPushCore
import Testing

@testable import RichPushFCM

/// FCM's answers, mapped as Firebase's error-code page says to handle them.
@Suite("FCM answers")
struct FCMResponseTests {
    static func error(_ code: Int, _ status: String, _ fcm: String?) -> [UInt8] {
        var details = ""
        if let fcm { details = #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(fcm)"}]"# }
        return Array(#"{"error":{"code":\#(code),"message":"m","status":"\#(status)"\#(details)}}"#.utf8)
    }

    /// What each answer becomes for the worker: a quota is a deferral (no attempt spent), a 5xx
    /// with Retry-After a failure retried no sooner than that, one without a plain retryable failure.
    @Test func answersBecomeOutcomes() {
        #expect(FCMPushAdapter.outcome(of: .throttled(reason: "q", after: .seconds(20))) == .deferred(reason: "q", after: .seconds(20)))
        #expect(
            FCMPushAdapter.outcome(of: .throttled(reason: "q", after: nil)) == .deferred(reason: "q", after: .seconds(60)),
            "a minute without Retry-After")
        #expect(
            FCMPushAdapter.outcome(of: .deviceThrottled(reason: "d", after: .seconds(5)))
                == .deviceDeferred(reason: "d", after: .seconds(5)))
        #expect(FCMPushAdapter.outcome(of: .retry(reason: "u", after: .seconds(3))) == .failedRetryAfter(reason: "u", after: .seconds(3)))
        #expect(FCMPushAdapter.outcome(of: .retry(reason: "u", after: nil)) == .failed(reason: "u", retryable: true))
        #expect(FCMPushAdapter.outcome(of: .unregistered(reason: "x")) == .invalidToken(reason: "x"))
    }

    /// A QuotaFailure that names a device slows that device only; any other 429 holds the project.
    @Test func aDevicesQuotaIsNotTheProjects() {
        func body(_ subject: String, _ description: String) -> [UInt8] {
            Array(
                #"{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"},{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"\#(subject)","description":"\#(description)"}]}]}}"#
                    .utf8)
        }
        #expect(
            FCMResponse.action(status: 429, body: body("device:abc", "Device message rate exceeded."), retryAfter: "5")
                == .deviceThrottled(reason: "QUOTA_EXCEEDED: m", after: .seconds(5)))
        #expect(
            FCMResponse.action(status: 429, body: body("project:p", "Project message rate exceeded."), retryAfter: "5")
                == .throttled(reason: "QUOTA_EXCEEDED: m", after: .seconds(5)))
        #expect(FCMResponse.holdsProject(status: 429, retryAfter: "5", body: body("project:p", "Project message rate exceeded.")))
        #expect(!FCMResponse.holdsProject(status: 429, retryAfter: "5", body: body("device:abc", "Device message rate exceeded.")))
        #expect(!FCMResponse.holdsProject(status: 503, retryAfter: "5", body: []))
    }

    @Test func eachErrorLeadsToItsAction() {
        #expect(
            FCMResponse.action(status: 200, body: Array(#"{"name":"projects/p/messages/0:1"}"#.utf8))
                == .sent(messageID: "projects/p/messages/0:1"))
        #expect(
            FCMResponse.action(status: 404, body: Self.error(404, "NOT_FOUND", "UNREGISTERED")) == .unregistered(reason: "UNREGISTERED: m"))
        #expect(
            FCMResponse.action(status: 400, body: Self.error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"))
                == .permanent(reason: "INVALID_ARGUMENT: m"))
        #expect(
            FCMResponse.action(status: 403, body: Self.error(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"))
                == .permanent(reason: "SENDER_ID_MISMATCH: m"))
        #expect(
            FCMResponse.action(status: 429, body: Self.error(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), retryAfter: "30")
                == .throttled(reason: "QUOTA_EXCEEDED: m", after: .seconds(30)))
        #expect(
            FCMResponse.action(status: 503, body: Self.error(503, "UNAVAILABLE", "UNAVAILABLE"))
                == .retry(reason: "UNAVAILABLE: m", after: nil))
        #expect(FCMResponse.action(status: 500, body: Self.error(500, "INTERNAL", "INTERNAL")) == .retry(reason: "INTERNAL: m", after: nil))
        #expect(
            FCMResponse.action(status: 401, body: Self.error(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"))
                == .permanent(reason: "THIRD_PARTY_AUTH_ERROR: m"))
        // An expired or refused access token: no FcmError, just UNAUTHENTICATED.
        #expect(
            FCMResponse.action(status: 401, body: Self.error(401, "UNAUTHENTICATED", nil)) == .refreshToken(reason: "UNAUTHENTICATED: m"))
    }

    @Test func unknownOrBrokenAnswersNeverCrash() {
        #expect(
            FCMResponse.action(status: 502, body: Array("<html>bad gateway</html>".utf8))
                == .retry(reason: "<html>bad gateway</html>", after: nil))
        #expect(FCMResponse.action(status: 418, body: []) == .permanent(reason: "HTTP 418"))
        #expect(FCMResponse.action(status: 429, body: [], retryAfter: "soon") == .throttled(reason: "HTTP 429", after: nil))
        #expect(
            FCMResponse.action(status: 503, body: Array(#"{"error":"not an object"}"#.utf8), retryAfter: "999999")
                == .retry(reason: #"{"error":"not an object"}"#, after: .seconds(3600)))
    }
}
