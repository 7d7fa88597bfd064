import RichPushCore
import RichPushInMemory
import RichPushQueue
import Testing

/// A template's `Headers` through the worker: rendered with the device's properties and applied
/// to its platform's request (APNs' priority, push type, expiration, collapse id; Web Push's
/// TTL, Urgency, Topic), and a value the platform would refuse fails that device alone.
@Suite("Template headers, delivery")
struct TemplateHeaderDeliveryTests {
    typealias Setup = TemplateDeliveryTests.Setup

    @Test func eachPlatformsRequestCarriesTheRenderedHeaders() async throws {
        let alert = #"{"aps":{"alert":"$(title)"}}"#
        let quiet = #"{"aps":{"content-available":1},"t":"$(title)"}"#
        let setup = try await Setup(
            [
                TemplateDeliveryTests.device(
                    "ios", locale: "en",
                    templates: [
                        InstallationTemplate(
                            name: "main", body: alert,
                            headers: [
                                "apns-priority": "$(priority)", "apns-collapse-id": "{'score-' + $(match)}",
                                "apns-expiration": "1900000000",
                            ])
                    ]),
                TemplateDeliveryTests.device(
                    "ios-quiet", locale: "en",
                    templates: [InstallationTemplate(name: "main", body: alert, headers: ["apns-push-type": "background"])]),
                TemplateDeliveryTests.device(
                    "web", .webpush, locale: "en",
                    templates: [
                        InstallationTemplate(
                            name: "main", body: quiet, headers: ["TTL": "$(ttl)", "Urgency": "very-low", "Topic": "{'match' + $(match)}"])
                    ]),
                TemplateDeliveryTests.device(
                    "ios-bad", locale: "en",
                    templates: [InstallationTemplate(name: "main", body: alert, headers: ["apns-priority": "$(bad)"])]),
                TemplateDeliveryTests.device("plain", locale: "en", templates: []),
            ], properties: #"{"title": "Goal", "priority": "5", "match": "42", "ttl": "120", "bad": "7"}"#)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        func push(_ id: String) throws -> RenderedPush {
            try #require(setup.adapter.pushes.first { $0.installation.id == id }?.rendered, "\(id) was sent")
        }

        let ios = try push("ios")
        #expect(ios.pushType == "alert" && ios.priority == 5, "the header over the alert's 10")
        #expect(ios.collapseID == "score-42")
        #expect(ios.expiration == 1_900_000_000 && ios.deadline == 1_900_000_000_000)
        let quietPush = try push("ios-quiet")
        #expect(quietPush.pushType == "background" && quietPush.priority == 5, "a background push goes at priority 5, as Apple requires")

        let web = try push("web")
        #expect(web.urgency == "very-low" && web.collapseID == "match42")
        let remaining = web.deadline - JobQueue.nowMilliseconds()
        #expect((60_000...120_000).contains(remaining), "TTL 120 s from the send: \(remaining) ms left")

        let plain = try push("plain")
        #expect(plain.urgency == nil && plain.collapseID == String(setup.id), "no template: the plain push's request")

        #expect(setup.adapter.pushes.first { $0.installation.id == "ios-bad" } == nil)
        let bad = try await setup.device("ios-bad")
        #expect(
            bad?.state == "failed" && bad?.error?.hasPrefix("invalid_header: template 'main': header 'apns-priority' is 5 or 10") == true,
            "\(bad?.error ?? "-")")
        #expect(try await setup.notifications.status(id: setup.id)?.counts["sent"] == 4)
    }
}
