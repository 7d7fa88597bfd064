import Foundation
import RichPushCore
import RichPushInMemory
import RichPushQueue
import Testing

/// A template's `Expiry` through the worker: rendered with the device's properties, it sets the
/// push's expiration (APNs) or TTL (Web Push); one already past fails that device as `expired`, an
/// empty one (a missing property under NH's rule) sets none.
@Suite("Template expiry, delivery")
struct TemplateExpiryDeliveryTests {
    typealias Setup = TemplateDeliveryTests.Setup

    @Test func theRenderedExpirySetsEachPushsDeadline() async throws {
        let alert = #"{"aps":{"alert":"$(title)"}}"#
        let quiet = #"{"aps":{"content-available":1},"t":"$(title)"}"#
        // Relative to the test's clock: an hour ahead and an hour past.
        let formatter = ISO8601DateFormatter()
        let ahead = formatter.string(from: Date().addingTimeInterval(3600))
        let past = formatter.string(from: Date().addingTimeInterval(-3600))
        var empty = InstallationTemplate(name: "main", body: alert, expiry: "$(nothing)")
        empty.missing = .empty
        let setup = try await Setup(
            [
                TemplateDeliveryTests.device(
                    "ios", locale: "en", templates: [InstallationTemplate(name: "main", body: alert, expiry: "$(until)")]),
                TemplateDeliveryTests.device(
                    "web", .webpush, locale: "en", templates: [InstallationTemplate(name: "main", body: quiet, expiry: ahead)]),
                TemplateDeliveryTests.device(
                    "ios-late", locale: "en", templates: [InstallationTemplate(name: "main", body: alert, expiry: past)]),
                TemplateDeliveryTests.device(
                    "ios-bad", locale: "en", templates: [InstallationTemplate(name: "main", body: alert, expiry: "$(title)")]),
                TemplateDeliveryTests.device("ios-empty", locale: "en", templates: [empty]),
                TemplateDeliveryTests.device("ios-none", locale: "en", templates: [InstallationTemplate(name: "main", body: alert)]),
            ], properties: #"{"title": "Goal", "until": "\#(ahead)"}"#)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        func push(_ id: String) throws -> RenderedPush {
            try #require(setup.adapter.pushes.first { $0.installation.id == id }?.rendered, "\(id) was sent")
        }
        let expected = Int64(try #require(formatter.date(from: ahead)).timeIntervalSince1970) * 1000
        let ios = try push("ios")
        #expect(ios.deadline == expected && ios.expiration == Int(expected / 1000), "the property's date-time")
        #expect(try push("web").deadline == expected, "a literal; the adapter sends the time left as TTL")
        let none = try push("ios-none")
        #expect(try push("ios-empty").expiration == none.expiration && none.deadline != expected, "an empty expiry sets none")
        let late = try await setup.device("ios-late")
        #expect(late?.state == "failed" && late?.error?.hasPrefix("expired: template 'main': its expiry") == true, "\(late?.error ?? "-")")
        let bad = try await setup.device("ios-bad")
        #expect(bad?.state == "failed" && bad?.error?.hasPrefix("invalid_expiry: template 'main': expiry is a W3C date-time") == true)
        #expect(setup.adapter.pushes.allSatisfy { !["ios-late", "ios-bad"].contains($0.installation.id) })
    }
}
