import Foundation
import RichPushCore

/// A push as the tutorial's app sees it once its platform delivered it: the rich keys, and how
/// the device's notifications collapse it.
struct AppPush {
    var keys: ReceivedPush.RichKeys
    var platform: Platform
    /// What the device remembers it shows it as; nil: it never collapses.
    var shownAs: String?
    /// Why a push already shown is not shown again (the `collapsed` event's detail).
    var collapsed: String
    /// When it was sent (the hub) or accepted (a web push service): microseconds since 1970.
    var sentAt: Int?
}

/// A payload fetch's answer: its status, body and content type.
typealias Fetched = (status: Int, body: Data, contentType: String?)

extension DeviceSimulator {
    // MARK: - One push, as the tutorial's app handles it

    /// A push from the simulated hub (an iPhone's APNs payload or an Android phone's FCM message).
    func handle(envelope bytes: [UInt8], handle: String) async {
        guard let device = devices.withLock({ $0[handle] }) else { return }
        guard let envelope = ReceivedPush(json: bytes) else {
            emit(SimulatorEvent(event: "failed", device: device.index, installation: device.installation, detail: "push is not JSON"))
            return
        }
        let android = configuration.platform(of: device.index) == .fcm
        guard let keys = envelope.payload.keys(for: android ? .fcm : .apns) else {
            emit(
                SimulatorEvent(
                    event: "failed", device: device.index, installation: device.installation,
                    detail: "not an FCM data message: the Android app reads its keys from the message's data"))
            return
        }
        // A resend of the same notification under the same collapse id is replaced, not shown
        // again; another notification with that collapse id replaces it and is shown. The
        // Android app drops a richId it has shown (FCM gets no collapse key of ours: a resend
        // after a crash arrives as a message of its own).
        let push = AppPush(
            keys: keys, platform: android ? .fcm : .apns,
            shownAs: android ? keys.richId.map { "richId#\($0)" } : envelope.id.map { "\($0)#\(keys.richId ?? "")" },
            collapsed: android
                ? "richId \(keys.richId ?? "") is already shown: dropped"
                : "collapse id \(envelope.id ?? "") is already shown: replaced, not shown again",
            sentAt: envelope.sentAt)
        await admit(push, Self.incoming(envelope, android: android), on: device, handle: handle)
    }

    /// The app's behaviour from the push on, the same on every platform, in its steps: received
    /// (or collapsed), the background fetch, shown (or collapsed, for a second copy), the local
    /// notification after the fire delay, the user's tap. Whether the device shows it (or showed
    /// it already: collapsed).
    @discardableResult
    func present(_ push: AppPush, on device: (index: Int, installation: String), handle: String) async -> Bool {
        var event = SimulatorEvent(
            event: "received", device: device.index, installation: device.installation, richId: push.keys.richId,
            richType: push.keys.richType, message: push.keys.richMessage, sinceSentMicros: push.sentAt.map { Self.nowMicros() - $0 })
        guard receive(push, event: &event, handle: handle) else { return true }
        guard configuration.fetch else { return true }
        guard let (id, richType, fetched) = await backgroundFetch(push, event: &event, installation: device.installation) else {
            return false
        }
        // Shown from here on, and only from here: a push whose fetch failed left nothing on the
        // screen, so its resend is handled anew (chaos once saw a resend collapsed into a push
        // that was never shown). Two copies that arrived together: the second collapses here.
        if let shownAs = push.shownAs, !collapse.show(shownAs, on: handle) {
            event.event = "collapsed"
            event.detail = push.collapsed
            emit(event)
            return true
        }
        guard configuration.appShowsNotifications else {
            event.event = "unshown"
            event.detail = "the app handled the push without showing a notification"
            emit(event)
            return false
        }
        let active = await notify(push, id: id, event: &event, device: device)
        await tap(push, id: id, richType: richType, fetched: fetched, active: active, event: &event, device: device)
        return true
    }

    /// Received, or collapsed when the device shows it already (a resend after a worker died
    /// between send and record replaces what the device shows). Without the background fetch a
    /// push counts as shown when received; with it, once fetched. False: nothing more to do.
    private func receive(_ push: AppPush, event: inout SimulatorEvent, handle: String) -> Bool {
        if let shownAs = push.shownAs, configuration.fetch ? collapse.contains(shownAs, on: handle) : !collapse.show(shownAs, on: handle) {
            event.event = "collapsed"
            event.detail = push.collapsed
            emit(event)
            return false
        }
        emit(event)
        return true
    }

    /// didReceiveRemoteNotification: richId as int, then by rich type, the payload fetched from
    /// the API (`fetched`); nil after a `failed` event saying why.
    private func backgroundFetch(
        _ push: AppPush, event: inout SimulatorEvent, installation: String
    ) async
        -> (id: Int, richType: String, fetched: (status: Int, body: Data, contentType: String?))?
    {
        guard let id = push.keys.richId.flatMap(Int.init) else {
            event.event = "failed"
            event.detail = "richId is not an integer"
            emit(event)
            return nil
        }
        guard let richType = push.keys.richType, ["img", "url", "sound", "text"].contains(richType) else {
            event.event = "failed"
            event.detail = "unsupported rich type '\(push.keys.richType ?? "none")'"
            emit(event)
            return nil
        }
        let fetched: (status: Int, body: Data, contentType: String?)
        do {
            fetched = try await fetchWithRetry(id, installation: installation)
        } catch {
            event.event = "failed"
            event.detail = "fetch failed: \(error)"
            emit(event)
            return nil
        }
        guard fetched.status == 200 else {
            event.event = "failed"
            event.status = fetched.status
            event.detail = "background fetch answered HTTP \(fetched.status): \(String(decoding: fetched.body.prefix(200), as: UTF8.self))"
            emit(event)
            return nil
        }
        event.event = "fetched"
        event.status = 200
        event.detail = "\(fetched.body.count) bytes, \(fetched.contentType ?? "?")"
        event.sinceSentMicros = push.sentAt.map { Self.nowMicros() - $0 }
        emit(event)
        return (id, richType, fetched)
    }

    /// The local notification: scheduled, fired after the delay ("to give you time to leave the
    /// app"), shown as each platform shows it (the app state alternates in `mixed`), then the
    /// `displayed` receipt. Whether the app was active.
    private func notify(_ push: AppPush, id: Int, event: inout SimulatorEvent, device: (index: Int, installation: String)) async -> Bool {
        let message = push.keys.richMessage
        event.event = "scheduled"
        event.detail = "category \(Self.category), fires in \(configuration.fireDelay)"
        emit(event)
        if configuration.fireDelay > .zero { try? await Task.sleep(for: configuration.fireDelay) }
        let active = condition(of: device.index) == .foreground
        event.event = active ? "alert" : "banner"
        event.detail =
            switch (push.platform, active) {
            case (.fcm, true): "heads-up notification \"Notification\": \(message ?? "") [More]"
            case (.fcm, false): "notification in the shade: \(message ?? "") (action: More)"
            // The page is open: the service worker hands the push to it, which shows its own alert.
            case (.webpush, true): "in-page alert \"Notification\": \(message ?? "") [OK] [More]"
            case (.webpush, false): "browser notification: \(message ?? "") (action: More)"
            case (_, true): "in-app alert \"Notification\": \(message ?? "") [OK] [More]"
            case (_, false): "system banner: \(message ?? "") (action: More)"
            }
        event.sinceSentMicros = push.sentAt.map { Self.nowMicros() - $0 }
        emit(event)
        await receipt(id, "displayed", device.installation)
        return active
    }

    /// What the simulated user does with the notification: nothing, OK, or More (the image view,
    /// the payload saved, the `opened` receipt).
    func tap(
        _ push: AppPush, id: Int, richType: String, fetched: (status: Int, body: Data, contentType: String?), active: Bool,
        event: inout SimulatorEvent, device: (index: Int, installation: String)
    ) async {
        switch configuration.tap {
        case .none:
            return
        case .ok:
            event.event = "dismissed"
            event.detail = active ? "OK" : "banner ignored"
            emit(event)
        case .more:
            event.event = "opened"
            event.detail =
                switch (push.platform, active) {
                case (_, true): "More → image view"
                case (.webpush, false): "notification clicked → page opened on the image view"
                case (_, false): "banner tapped → app opened on the image view"
                }
            event.path = save(fetched.body, id: id, device: device.index, richType: richType, contentType: fetched.contentType)
            if richType == "url" { event.detail = "opened \(String(decoding: fetched.body, as: UTF8.self))" }
            event.sinceSentMicros = push.sentAt.map { Self.nowMicros() - $0 }
            emit(event)
            await receipt(id, "opened", device.installation)
        }
    }

    /// The background fetch, tried again with back-off (0.1 s doubling to 2 s) while the API is
    /// unreachable or answers 5xx, within `budget` (`fetchBudget`); the last answer or error stands.
    func fetchWithRetry(_ id: Int, installation: String, within budget: Duration? = nil) async throws -> Fetched {
        try await fetchWithRetry(url: "/api/notifications/\(id)", installation: installation, within: budget)
    }

    /// As ``fetchWithRetry(_:installation:within:)``, from `url` (a path of the API, or the
    /// absolute `richUrl` an alert carries).
    func fetchWithRetry(url: String, installation: String, within budget: Duration? = nil) async throws -> Fetched {
        let deadline = ContinuousClock.now + (budget ?? configuration.fetchBudget)
        // A signed media URL names its device and needs no credentials; the API's path needs both.
        let signed = url.contains("/media/") && url.contains("signature=")
        let target = signed ? url : url + (url.contains("?") ? "&" : "?") + "installation=\(installation)"
        var delay = Duration.milliseconds(100)
        while true {
            do {
                // Each attempt ends by the deadline: a fetch that hangs does not outlast the time iOS gives.
                let answer = try await api.call("GET", target, timeout: deadline - ContinuousClock.now, authorized: !signed)
                if answer.status < 500 || ContinuousClock.now + delay > deadline { return answer }
            } catch {
                if ContinuousClock.now + delay > deadline { throw error }
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(2))
        }
    }

    func receipt(_ id: Int, _ kind: String, _ installation: String) async {
        guard configuration.sendReceipts else { return }
        do {
            let (status, body, _) = try await api.call(
                "POST", "/api/notifications/\(id)/receipts", json: ["kind": kind, "installation": installation])
            if status != 200 {
                logger.warning("receipt refused", metadata: ["status": "\(status)", "body": "\(String(decoding: body, as: UTF8.self))"])
            }
        } catch {
            logger.warning("receipt failed", metadata: ["error": "\(error)"])
        }
    }

    private func save(_ bytes: Data, id: Int, device: Int, richType: String, contentType: String?) -> String? {
        guard let directory = configuration.outDirectory else { return nil }
        let ext =
            switch contentType?.split(separator: ";").first.map(String.init) {
            case "image/png": "png"
            case "image/jpeg": "jpg"
            case "image/gif": "gif"
            case "text/uri-list", "text/plain": "txt"
            default: richType == "sound" ? "audio" : "bin"
            }
        let file = directory.appendingPathComponent("richpush-\(id)-device\(device).\(ext)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try bytes.write(to: file)
            return file.path
        } catch {
            logger.warning("cannot save the payload", metadata: ["path": "\(file.path)", "error": "\(error)"])
            return nil
        }
    }
}
