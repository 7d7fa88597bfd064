import Foundation
import RichPushAPNS
import Testing

@Suite("Apple's answers")
struct APNSResponseTests {
    static func body(_ reason: String, timestamp: Int? = nil) -> [UInt8] {
        Array((timestamp.map { #"{"reason":"\#(reason)","timestamp":\#($0)}"# } ?? #"{"reason":"\#(reason)"}"#).utf8)
    }

    @Test func eachStatusLeadsToItsAction() {
        #expect(APNSResponse.action(status: 200, body: [], apnsID: "id-1") == .sent(apnsID: "id-1"))
        #expect(APNSResponse.action(status: 400, body: Self.body("BadDeviceToken"), apnsID: nil) == .permanent(reason: .badDeviceToken))
        #expect(
            APNSResponse.action(status: 400, body: Self.body("DeviceTokenNotForTopic"), apnsID: nil)
                == .permanent(reason: .deviceTokenNotForTopic))
        #expect(APNSResponse.action(status: 413, body: Self.body("PayloadTooLarge"), apnsID: nil) == .permanent(reason: .payloadTooLarge))
        #expect(
            APNSResponse.action(status: 403, body: Self.body("ExpiredProviderToken"), apnsID: nil)
                == .refreshToken(reason: .expiredProviderToken))
        #expect(
            APNSResponse.action(status: 403, body: Self.body("InvalidProviderToken"), apnsID: nil)
                == .refreshToken(reason: .invalidProviderToken))
        #expect(APNSResponse.action(status: 403, body: Self.body("BadCertificate"), apnsID: nil) == .permanent(reason: .badCertificate))
        // 429 without a time is about one device; with Retry-After (or too many token updates) the sender waits.
        #expect(
            APNSResponse.action(status: 429, body: Self.body("TooManyRequests"), apnsID: nil)
                == .deviceThrottled(reason: .tooManyRequests, after: nil))
        #expect(
            APNSResponse.action(status: 429, body: Self.body("TooManyRequests"), apnsID: nil, retryAfter: "20")
                == .throttled(reason: .tooManyRequests, after: .seconds(20)))
        #expect(
            APNSResponse.action(status: 429, body: Self.body("TooManyProviderTokenUpdates"), apnsID: nil)
                == .throttled(reason: .tooManyProviderTokenUpdates, after: nil))
        #expect(APNSResponse.holdsSender(status: 429, retryAfter: "20", body: Self.body("TooManyRequests")))
        #expect(!APNSResponse.holdsSender(status: 429, retryAfter: nil, body: Self.body("TooManyRequests")))
        #expect(
            APNSResponse.action(status: 503, body: Self.body("ServiceUnavailable"), apnsID: nil, retryAfter: "7")
                == .retry(reason: .serviceUnavailable, after: .seconds(7)))
        #expect(
            APNSResponse.action(status: 500, body: Self.body("InternalServerError"), apnsID: nil)
                == .retry(reason: .internalServerError, after: nil))
        let gone = APNSResponse.action(status: 410, body: Self.body("Unregistered", timestamp: 1_700_000_000_123), apnsID: nil)
        #expect(gone == .unregistered(since: Date(timeIntervalSince1970: 1_700_000_000.123), reason: .unregistered))
    }

    @Test func unknownOrBrokenAnswersNeverCrash() {
        #expect(
            APNSResponse.action(status: 400, body: Self.body("SomethingNew"), apnsID: nil) == .permanent(reason: .other("SomethingNew")))
        #expect(APNSResponse.action(status: 502, body: Array("<html>".utf8), apnsID: nil) == .retry(reason: .other("<html>"), after: nil))
        #expect(APNSResponse.action(status: 410, body: [], apnsID: nil) == .unregistered(since: nil, reason: .other("HTTP 410")))
        #expect(APNSReason(rawValue: "BadCollapseId").rawValue == "BadCollapseId")
    }
}
