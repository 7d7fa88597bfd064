import RichPushCore
import RichPushQueue
import RichPushStorage
import Testing

/// A rich-push job names its app (none: the default app, as every job written before apps).
@Suite("Rich-push jobs and their app")
struct RichPushJobAppTests {
    static func job(_ request: JobRequest) -> Job {
        Job(id: "1-0", type: request.type, payload: request.payload, attempt: 1, enqueuedAt: 0)
    }

    @Test func jobsOfTheDefaultAppKeepTodaysPayloadsAndOthersNameTheirApp() throws {
        let shop = try #require(AppID(validating: "shop"))
        #expect(String(decoding: RichPushJob.request(notification: 42).payload, as: UTF8.self) == "42")
        #expect(String(decoding: RichPushJob.request(notification: 42, app: shop).payload, as: UTF8.self) == "shop:42")

        let whole = try RichPushJob.delivery(of: Self.job(RichPushJob.request(notification: 42, app: shop)))
        #expect(whole == RichPushJob.Delivery(app: shop, notification: 42, installations: nil))
        let batch = try RichPushJob.delivery(of: Self.job(RichPushJob.request(notification: 7, installations: ["a", "b"], app: shop)))
        #expect(batch == RichPushJob.Delivery(app: shop, notification: 7, installations: ["a", "b"]))
        // As written before apps existed.
        #expect(
            try RichPushJob.delivery(of: Job(id: "1-0", type: "rich-push", payload: Array("9".utf8), attempt: 1, enqueuedAt: 0)).app
                == .default)
        let old = Array(#"{"id":3,"installations":["x"]}"#.utf8)
        #expect(
            try RichPushJob.delivery(of: Job(id: "1-0", type: "rich-push-batch", payload: old, attempt: 1, enqueuedAt: 0))
                == RichPushJob.Delivery(app: .default, notification: 3, installations: ["x"]))
    }

    @Test(arguments: ["Shop:1", "shop:", ":1", "shop:1:2", "shop:x", String(repeating: "a", count: 70) + ":1"])
    func aPayloadNamingNoAppOrIdIsRefusedForGood(payload: String) {
        #expect(throws: JobError.self) {
            try RichPushJob.delivery(of: Job(id: "1-0", type: "rich-push", payload: Array(payload.utf8), attempt: 1, enqueuedAt: 0))
        }
    }

    @Test func aBatchNamingABadAppIsRefused() {
        let payload = Array(#"{"id":3,"installations":["x"],"app":"No Such"}"#.utf8)
        #expect(throws: JobError.self) {
            try RichPushJob.delivery(of: Job(id: "1-0", type: "rich-push-batch", payload: payload, attempt: 1, enqueuedAt: 0))
        }
    }
}
