import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Testing

/// Template sends through the worker on the in-memory store, ledger and adapter: each device with
/// templates gets its own rendered payload in its locale, the others the plain push, and a device
/// whose template cannot be rendered (a property missing, over the platform's limit) fails alone.
@Suite("Template delivery, in memory")
struct TemplateDeliveryTests {
    static let apnsBody = #"{"aps":{"alert":{"title":"$(title)","body":"$(body)"}},"richId":"$(richId)","richUrl":"$(richUrl)"}"#
    static let fcmBody = #"{"data":{"title":"$(title)","richId":"$(richId)","richType":"$(richType)"}}"#

    struct Setup {
        let notifications = InMemoryNotifications()
        let installations: InMemoryInstallationStore
        let adapter = InMemoryPushAdapter { .sent(adapterID: "mem-\($0.installation.id)") }
        let handler: RichPushJobHandler
        let id: Int

        init(
            _ devices: [Installation], properties: String?, target: String = "news", native: NativePush? = nil, templatesOnly: Bool = false
        ) async throws {
            installations = InMemoryInstallationStore(devices)
            handler = RichPushJobHandler(
                ledger: notifications, installations: installations, queue: InMemoryJobQueue(), adapter: adapter,
                renderer: PushRenderer(), formats: [.fcm: .fcm, .webpush: .webpush])
            var draft = NotificationDraft(
                message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: target)
            draft.properties = try properties.map { try SendProperties.parse(json: Array($0.utf8)) }
            draft.native = native
            draft.templatesOnly = templatesOnly
            id = try await notifications.create(draft, hashing: { _ in "hash" }).id
        }

        func run() async -> Result<Void, any Error> {
            let job = Job(id: "1-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, enqueuedAt: 0)
            return await handler.handle(batch: [job])[0]
        }

        func payload(_ installation: String) -> String? {
            adapter.pushes.first { $0.installation.id == installation }.map { String(decoding: $0.rendered.payload, as: UTF8.self) }
        }

        func device(_ installation: String) async throws -> NotificationStatus.Device? {
            try await notifications.status(id: id)?.devices.first { $0.installation == installation }
        }
    }

    static func device(_ id: String, _ platform: Platform = .apns, locale: String?, templates: [InstallationTemplate]) -> Installation {
        Installation(
            id: id, platform: platform, handle: "h-\(id)", tags: ["news"], owner: "alice", updatedAt: 0, templates: templates,
            locale: locale)
    }

    @Test func eachDeviceGetsItsTemplateInItsLocale() async throws {
        let apns = [InstallationTemplate(name: "alert", body: Self.apnsBody)]
        let fcm = [InstallationTemplate(name: "data", body: Self.fcmBody)]
        let setup = try await Setup(
            [
                Self.device("en", locale: "en-US", templates: apns),
                Self.device("fr", locale: "fr_CA", templates: apns),
                Self.device("de", .fcm, locale: "de-AT", templates: fcm),
                Self.device("xx", locale: "ja", templates: apns),
                Self.device("plain", locale: "fr", templates: []),
            ], properties: #"{"title": {"en": "Hello", "fr": "Bonjour", "fr-CA": "Allo", "de": "Hallo"}, "body": "42"}"#)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        let english = try #require(setup.payload("en"))
        #expect(
            english.hasPrefix(#"{"aps":{"alert":{"title":"Hello","body":"42"}},"richId":"\#(setup.id)","richUrl":"http:"#), "\(english)")
        #expect(english.contains("/api/notifications/\(setup.id)"))
        #expect(setup.payload("fr")?.contains(#""title":"Allo""#) == true, "exact fr-CA")
        #expect(setup.payload("de") == #"{"data":{"title":"Hallo","richId":"\#(setup.id)","richType":"text"}}"#, "language of de-AT")
        #expect(setup.payload("xx")?.contains(#""title":"Hello""#) == true, "an unknown locale gets the first given")
        #expect(setup.payload("plain")?.contains("content-available") == true, "no templates: the plain rich push")
        let alert = try #require(setup.adapter.pushes.first { $0.installation.id == "en" })
        #expect(alert.rendered.pushType == "alert" && alert.rendered.priority == 10)
        #expect(try await setup.notifications.status(id: setup.id)?.counts["sent"] == 5)
        // The in-memory ledger keeps the locale chosen and the template, as Redis's does.
        #expect(try await setup.device("fr")?.locale == "fr-CA")
        let german = try await setup.device("de"), plain = try await setup.device("plain")
        #expect(german?.locale == "de" && german?.template == "data")
        #expect(try await setup.device("xx")?.locale == "en", "the first given")
        #expect(plain != nil && plain?.locale == nil && plain?.template == nil)
    }

    @Test func aMissingPropertyFailsThatDeviceAlone() async throws {
        let body = #"{"aps":{"alert":"$(title)"},"extra":"$(subtitle)"}"#
        let setup = try await Setup(
            [
                Self.device("strict", locale: "en", templates: [InstallationTemplate(name: "t", body: body, missing: .fail)]),
                Self.device(
                    "lenient", locale: "en", templates: [InstallationTemplate(name: "t", body: body, defaults: ["subtitle": "more"])]),
                Self.device("nodefault", locale: "en", templates: [InstallationTemplate(name: "t", body: body)]),
            ], properties: #"{"title": "Hi"}"#)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id) == ["lenient"])
        #expect(setup.payload("lenient") == #"{"aps":{"alert":"Hi"},"extra":"more"}"#)
        for id in ["strict", "nodefault"] {
            let device = try #require(try await setup.device(id))
            #expect(device.state == "failed")
            #expect(device.error?.hasPrefix("template_missing_property") == true, "\(device.error ?? "")")
        }
        // Run again: recorded, so nothing is rendered or sent twice.
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.count == 1)
    }

    @Test func anNHTemplateRendersAMissingPropertyEmptyAndABroadcastReachesEveryTag() async throws {
        let body = #"{"aps":{"alert":"$(title)"},"extra":"$(subtitle)"}"#
        var elsewhere = Self.device("elsewhere", locale: nil, templates: [InstallationTemplate(name: "t", body: body, missing: .empty)])
        elsewhere.tags = ["sports"]
        var untagged = Self.device("untagged", locale: nil, templates: [])
        untagged.tags = []
        let setup = try await Setup(
            [
                Self.device("nh", locale: nil, templates: [InstallationTemplate(name: "t", body: body, missing: .empty)]), elsewhere,
                untagged,
            ],
            properties: #"{"title": "Hi"}"#, target: "*")
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(
            setup.adapter.pushes.map(\.installation.id).sorted() == ["elsewhere", "nh", "untagged"], "'*': every device, whatever its tags")
        #expect(setup.payload("nh") == #"{"aps":{"alert":"Hi"},"extra":""}"#, "NH's rule: a missing property is an empty string")
        #expect(try await setup.device("nh")?.state == "sent")
    }

    @Test func anNHTemplateSendReachesOnlyTheDevicesWithATemplate() async throws {
        let body = #"{"aps":{"alert":"$(title)"}}"#
        let setup = try await Setup(
            [
                Self.device("with", locale: nil, templates: [InstallationTemplate(name: "t", body: body, missing: .empty)]),
                Self.device("without", locale: nil, templates: []),
            ],
            properties: #"{"title": "Hi"}"#, templatesOnly: true)
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id) == ["with"], "NH sends a template notification to template registrations alone")
        #expect(try await setup.device("without") == nil, "not its audience: no entry in the status")
    }

    @Test func aNativeSendGoesAsWrittenToItsFormatsDevicesAlone() async throws {
        let written = #"{"aps":{"content-available":1},"richId":"7"}"#
        let setup = try await Setup(
            [
                Self.device("iphone", locale: nil, templates: [InstallationTemplate(name: "t", body: #"{"aps":{"alert":"$(m)"}}"#)]),
                Self.device("android", .fcm, locale: nil, templates: []),
            ],
            properties: nil, native: NativePush(format: .apns, body: written, headers: ["apns-collapse-id": "c1"]))
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        #expect(setup.adapter.pushes.map(\.installation.id) == ["iphone"], "written for APNs: the Android device is not its audience")
        #expect(setup.payload("iphone") == written, "as written, its template not applied")
        let push = try #require(setup.adapter.pushes.first)
        #expect(push.rendered.pushType == "background" && push.rendered.priority == 5 && push.rendered.collapseID == "c1")
    }

    @Test func aPayloadOverThePlatformsLimitFailsThatDevice() async throws {
        let body = #"{"aps":{"alert":"$(text)"}}"#
        let setup = try await Setup(
            [
                Self.device("big", locale: "en", templates: [InstallationTemplate(name: "t", body: body)]),
                Self.device(
                    "web", .fcm, locale: "en", templates: [InstallationTemplate(name: "t", body: #"{"data":{"t":".(text, 100)"}}"#)]),
            ], properties: "{\"text\": \"\(String(repeating: "x", count: 5000))\"}")
        #expect(DeliveryLogicTests.disposition(await setup.run()) == nil)
        let big = try #require(try await setup.device("big"))
        #expect(big.state == "failed" && big.error?.hasPrefix("payload_too_large") == true, "\(big.error ?? "")")
        #expect(setup.payload("web") == "{\"data\":{\"t\":\"\(String(repeating: "x", count: 97))...\"}}", "clipped where the template asks")
    }
}
