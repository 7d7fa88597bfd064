import Foundation
import RichPushCore
import RichPushInMemory
import RichPushQueue
import RichPushStorage
import RichPushWorker
import Testing

/// `auto` through the worker on the in-memory store, ledger and adapter: each device's form
/// chosen from its estimate (budget, whether it fetched its last silent push), said in its
/// status entry, and every alert carrying a media URL signed for that device.
@Suite("Auto delivery through the worker, in memory")
struct AutoDeliveryFlowTests {
    static let key = Array(repeating: UInt8(7), count: 32)

    struct Setup {
        let notifications = InMemoryNotifications()
        let adapter = InMemoryPushAdapter { .sent(adapterID: "mem-\($0.installation.id)") }
        let handler: RichPushJobHandler
        let signer = MediaURLSigner(keyBytes: AutoDeliveryFlowTests.key)

        init(_ devices: [Installation]) {
            handler = RichPushJobHandler(
                ledger: notifications, installations: InMemoryInstallationStore(devices), queue: InMemoryJobQueue(), adapter: adapter,
                renderer: PushRenderer(apiBaseURL: "https://push.example"), formats: [.fcm: .fcm, .webpush: .webpush],
                mediaSigner: signer)
        }

        /// Sends one `auto` notification to tag `news` and returns its id.
        func send() async throws -> Int {
            var draft = NotificationDraft(
                message: "hi", richType: .text, contentType: "text/plain", payload: Array("p".utf8), creator: "alice", target: "news")
            draft.delivery.mode = .auto
            let id = try await notifications.create(draft, hashing: { _ in "hash" }).id
            let job = Job(id: "\(id)-0", type: RichPushJob.type, payload: RichPushJob.request(notification: id).payload, enqueuedAt: 0)
            #expect(DeliveryLogicTests.disposition(await handler.handle(batch: [job])[0]) == nil)
            return id
        }

        /// The form device `installation` got for notification `id`, from its payload.
        func form(_ id: Int, _ installation: String) -> String? {
            guard let push = adapter.pushes.last(where: { $0.notification == id && $0.installation.id == installation }) else { return nil }
            let text = String(decoding: push.rendered.payload, as: UTF8.self)
            return text.contains("richUrl") ? "alert" : "silent"
        }

        func fetch(_ id: Int, by installation: String) async throws {
            #expect(try await notifications.recordFetch(id: id, installation: installation, reader: "alice", if: nil))
        }
    }

    static func device(_ id: String, _ platform: Platform) -> Installation {
        Installation(id: id, platform: platform, handle: "h-\(id)", tags: ["news"], owner: "alice", updatedAt: 0)
    }

    @Test func eachDeviceGetsTheFormItsEstimateAllows() async throws {
        let setup = Setup([Self.device("answers", .apns), Self.device("quit", .apns), Self.device("android", .fcm)])
        var forms: [String: [String]] = [:]
        for _ in 0..<5 {
            let id = try await setup.send()
            for device in ["answers", "quit", "android"] { forms[device, default: []].append(setup.form(id, device) ?? "none") }
            try await setup.fetch(id, by: "answers")
            try await setup.fetch(id, by: "android")
        }
        // Three silent pushes in the budget, then alerts; a device that never fetched gets alerts
        // after its first; Android has no budget.
        #expect(forms["answers"] == ["silent", "silent", "silent", "alert", "alert"])
        #expect(forms["quit"] == ["silent", "alert", "alert", "alert", "alert"])
        #expect(forms["android"] == ["silent", "silent", "silent", "silent", "silent"])
        let last = try #require(try await setup.notifications.status(id: 5))
        let strategies = Dictionary(uniqueKeysWithValues: last.devices.map { ($0.installation, $0.strategy ?? "") })
        #expect(strategies["answers"]?.hasPrefix("alert: background budget spent") == true, "\(strategies)")
        #expect(strategies["quit"]?.hasPrefix("alert: silent push 1 was not fetched") == true, "\(strategies)")
        #expect(strategies["android"]?.hasPrefix("silent:") == true, "\(strategies)")
    }

    /// The alert's `richUrl` is signed for its device: valid for it, not for another device nor
    /// another notification.
    @Test func anAlertCarriesAMediaURLSignedForItsDevice() async throws {
        let setup = Setup([Self.device("quit", .apns), Self.device("other", .apns)])
        _ = try await setup.send()
        let id = try await setup.send()
        let push = try #require(setup.adapter.pushes.last { $0.installation.id == "quit" })
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(push.rendered.payload)) as? [String: Any])
        let richURL = try #require(payload["richUrl"] as? String)
        let url = try #require(URLComponents(string: richURL))
        #expect(url.path == "/media/default/\(id)" && url.host == "push.example", "\(url)")
        let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        let expires = try #require(query["expires"].flatMap { Int64($0) })
        let signature = try #require(query["signature"])
        #expect(query["installation"] == "quit")
        #expect(expires > Int64(Date().timeIntervalSince1970) + 86_000, "valid past the push's day-long deadline")
        #expect(try await setup.signer.isValid(signature: signature, app: .default, id: id, installation: "quit", expires: expires))
        #expect(!(try await setup.signer.isValid(signature: signature, app: .default, id: id, installation: "other", expires: expires)))
        #expect(!(try await setup.signer.isValid(signature: signature, app: .default, id: id - 1, installation: "quit", expires: expires)))
        #expect(!(try await setup.signer.isValid(signature: signature, app: .default, id: id, installation: "quit", expires: expires + 1)))
    }
}
