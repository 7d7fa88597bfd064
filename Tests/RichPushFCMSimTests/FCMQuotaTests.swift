import Testing

@testable import RichPushFCMSim

/// fcm-sim's send limits, at chosen clock values: the project's rolling minute and a device's
/// messages per minute.
@Suite("fcm-sim quota")
struct FCMQuotaTests {
    @Test func theProjectQuotaIsARollingMinute() {
        let quota = FCMQuota(limits: FCMQuota.Limits(projectPerMinute: 5, devicePerMinute: 1000))
        for second in 0..<5 { #expect(quota.admit(token: "d\(second)", now: 1000 + Double(second)) == nil) }
        // The sixth request within the minute is refused until the first one's second leaves it.
        #expect(quota.admit(token: "x", now: 1030) == .project(wait: 30))
        #expect(quota.admit(token: "x", now: 1059.5) == .project(wait: 1))
        // At 1060 the request made at 1000 is out of the window, but the refused ones counted.
        #expect(quota.admit(token: "x", now: 1060) != nil)
        // A minute after the refusals, there is room again.
        #expect(quota.admit(token: "x", now: 1125) == nil)
    }

    @Test func oneDeviceGetsAtMostItsLimitInASlidingMinute() {
        let quota = FCMQuota(limits: FCMQuota.Limits(projectPerMinute: 1000, devicePerMinute: 3))
        for _ in 0..<3 { #expect(quota.admit(token: "phone", now: 175) == nil) }
        #expect(quota.admit(token: "phone", now: 178) == .device(wait: 2), "the fourth within the minute waits")
        #expect(quota.admit(token: "other", now: 178) == nil, "another device is not held")
        // Just past the minute's boundary the three are still in the sliding minute.
        #expect(quota.admit(token: "phone", now: 181) != nil)
        // Twenty seconds in, a third of the minute before has slid out: room for one, not two.
        #expect(quota.admit(token: "phone", now: 200) == nil)
        #expect(quota.admit(token: "phone", now: 201) != nil)
        // Two quiet minutes later: all of it again.
        for _ in 0..<3 { #expect(quota.admit(token: "phone", now: 400) == nil) }
    }
}
