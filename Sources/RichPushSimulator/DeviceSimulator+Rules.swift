import Foundation
import RichPushAdapters
import RichPushCore

extension DeviceSimulator {
    // MARK: - The platforms' rules between the push and the app

    /// Simulated seconds since the simulator started.
    var simulatedNow: Double {
        let (seconds, attoseconds) = (ContinuousClock.now - startedAt).components
        return (Double(seconds) + Double(attoseconds) / 1e18) * (configuration.rules?.timeScale ?? 1)
    }

    /// What a `registered` event says of device `index` under the rules: its condition (and a web
    /// device's browser); nil when lenient.
    func conditionDetail(_ index: Int) -> String? {
        guard let ruleBook else { return nil }
        let browser = configuration.platform(of: index) == .webpush ? ", browser \(ruleBook.browser(of: index).rawValue)" : ""
        return "condition \(ruleBook.condition(of: index).rawValue)\(browser)"
    }

    /// Whether device `index` is off the network now (an `offline` device until it came back).
    func isOffline(_ index: Int) -> Bool {
        guard let ruleBook, !offlineDevicesBack.load(ordering: .acquiring) else { return false }
        return ruleBook.condition(of: index) == .offline
    }

    /// The condition device `index` is in now; an `offline` device is in the background once back.
    func condition(of index: Int) -> DeviceCondition {
        guard let ruleBook else {
            let active = configuration.appState == .active || (configuration.appState == .mixed && index % 2 == 0)
            return active ? .foreground : .background
        }
        let condition = ruleBook.condition(of: index)
        return condition == .offline && offlineDevicesBack.load(ordering: .acquiring) ? .background : condition
    }

    /// The `offline` devices back on the network: subscribed to their channels, with what the hub
    /// held for them meanwhile (APNs keeps one push per app; FCM up to 100).
    func bringOfflineDevicesOnline() async -> [(String, [UInt8])] {
        let handles = offlineDevices
        offlineDevicesBack.store(true, ordering: .releasing)
        guard !handles.isEmpty else { return [] }
        let hub = OfflineStore(prefix: configuration.hubPrefix)
        do {
            try await subscriber.ssubscribe(handles.map { hub.channel($0.handle) })
        } catch {
            logger.warning("offline devices cannot subscribe", metadata: ["error": "\(error)"])
            return []
        }
        for (_, device) in handles {
            emit(
                SimulatorEvent(
                    event: "online", device: device.index, installation: device.installation,
                    detail: "back on the network after \(Int(configuration.rules?.offlineSeconds ?? 0)) s (simulated)"))
        }
        let back = Set(handles.map(\.device.index))
        return await takeHeldPushesRetrying(of: { back.contains($0) })
    }

    /// The devices that were `offline` (their handle, index and installation).
    var offlineDevices: [(handle: String, device: (index: Int, installation: String))] {
        guard let ruleBook else { return [] }
        return devices.withLock { devices in
            devices.filter { ruleBook.condition(of: $0.value.index) == .offline && configuration.platform(of: $0.value.index) != .webpush }
                .map { ($0.key, $0.value) }
        }
    }

    /// When its app opens again, a device asks the API what it missed (its platform kept only
    /// the newest push, or none) and fetches each as it would a push: a `caught-up` event, then
    /// the app's steps. Up to 10 pages of 100.
    func catchUp(_ device: (index: Int, installation: String), handle: String) async {
        var after = 0
        for _ in 0..<10 {
            let page: (keys: [ReceivedPush.RichKeys], cursor: Int)
            do {
                page = try await api.missed(installation: device.installation, after: after)
            } catch {
                emit(SimulatorEvent(event: "failed", device: device.index, installation: device.installation, detail: "\(error)"))
                return
            }
            for keys in page.keys {
                emit(
                    SimulatorEvent(
                        event: "caught-up", device: device.index, installation: device.installation, richId: keys.richId,
                        richType: keys.richType, message: keys.richMessage, detail: "missed while offline: listed by the API"))
                let push = AppPush(
                    keys: keys, platform: configuration.platform(of: device.index), shownAs: nil, collapsed: "", sentAt: nil)
                await present(push, on: device, handle: handle)
            }
            guard page.keys.count == 100, page.cursor > after else { return }
            after = page.cursor
        }
    }

    /// What the device's system knows of a hub push: its kind and priority.
    static func incoming(_ envelope: ReceivedPush, android: Bool) -> IncomingPush {
        if android {
            return IncomingPush(
                kind: envelope.pushType == "notification" ? .alert(serviceExtension: false) : .background,
                highPriority: envelope.payload.androidHighPriority)
        }
        // A background push is priority 5 (APNs requires it); an alert 10.
        return envelope.pushType == "background"
            ? IncomingPush(kind: .background, highPriority: false)
            : IncomingPush(kind: .alert(serviceExtension: envelope.payload.mutableContent), highPriority: true)
    }

    /// The push through the device's rules: handed to the app now, later, or never.
    func admit(_ push: AppPush, _ incoming: IncomingPush, on device: (index: Int, installation: String), handle: String) async {
        guard let ruleBook, let rules = configuration.rules else {
            await present(push, on: device, handle: handle)
            return
        }
        let platform: PushPlatformRules =
            switch push.platform {
            case .fcm: .android
            case .webpush: .web
            default: .ios
            }
        let now = simulatedNow
        var event = SimulatorEvent(
            event: "deferred", device: device.index, installation: device.installation, richId: push.keys.richId,
            richType: push.keys.richType, message: push.keys.richMessage)
        let delivery: PushDelivery
        switch ruleBook.arrive(incoming, device: device.index, platform: platform, condition: condition(of: device.index), at: now) {
        case .deliver(let now):
            delivery = now
        case .dropped(let reason):
            event.event = "dropped"
            event.detail = reason
            emit(event)
            return
        case .deferred(let later, let at, let reason, let ticket, let coalescing):
            event.detail = "\(reason); due in \(Int((at - now).rounded(.up))) s (simulated)"
            emit(event)
            guard !(await stopSignal.sleep(for: rules.real(max(0, at - now)))) else { return }
            if coalescing, !ruleBook.release(ticket: ticket, device: device.index, at: simulatedNow) {
                event.event = "coalesced"
                event.detail = "a later background push replaced it while it was held back (iOS keeps one)"
                emit(event)
                return
            }
            delivery = later
        }
        let shown: Bool
        switch delivery {
        case .launch: shown = await present(push, on: device, handle: handle)
        case .serviceExtension: shown = await presentThroughExtension(push, on: device, handle: handle, rules: rules)
        case .systemAlert: shown = await presentSystemAlert(push, attached: nil, on: device, handle: handle)
        }
        if platform == .android, incoming.kind == .background, incoming.highPriority {
            ruleBook.noteHighPriority(device: device.index, shown: shown)
        }
        if platform == .web { await afterWebPush(shown: shown, event: event, device: device, endpoint: handle) }
    }

    /// What the browser does once its service worker handled a push. Chrome subscribes with
    /// `userVisibleOnly: true`: a push that showed nothing gets the browser's own notification.
    /// Safari revokes the subscription once a few pushes in a row showed nothing: the device
    /// leaves its push service and gets no more pushes.
    private func afterWebPush(shown: Bool, event: SimulatorEvent, device: (index: Int, installation: String), endpoint: String) async {
        guard let ruleBook else { return }
        var event = event
        let browser = ruleBook.browser(of: device.index)
        if !shown, browser == .chrome {
            event.event = "generic"
            event.detail = "no notification shown: Chrome showed its own (\"This site has been updated in the background\")"
            emit(event)
        }
        guard ruleBook.noteWebPush(device: device.index, shown: shown) else { return }
        event.event = "revoked"
        event.detail =
            "Safari revoked the push subscription: \(ruleBook.rules.safariRevokesAfter) pushes in a row showed no notification"
        do {
            try await web?.revoke(device.index)
        } catch {
            event.detail = (event.detail ?? "") + " (the push service did not take the unsubscribe: \(error))"
        }
        emit(event)
    }

    /// iOS's notification service extension: it has ``DeviceRules/extensionSeconds`` to fetch the
    /// payload and attach it (within Apple's attachment size); otherwise the system shows the
    /// original alert, without the media. Whether something was shown.
    private func presentThroughExtension(
        _ push: AppPush, on device: (index: Int, installation: String), handle: String, rules: DeviceRules
    ) async -> Bool {
        var event = SimulatorEvent(
            event: "received", device: device.index, installation: device.installation, richId: push.keys.richId,
            richType: push.keys.richType, message: push.keys.richMessage, sinceSentMicros: push.sentAt.map { Self.nowMicros() - $0 })
        event.detail = "notification service extension: \(Int(rules.extensionSeconds)) s to attach the media"
        if let shownAs = push.shownAs, collapse.contains(shownAs, on: handle) {
            event.event = "collapsed"
            event.detail = push.collapsed
            emit(event)
            return true
        }
        emit(event)
        var attached: Fetched?
        if let id = push.keys.richId.flatMap(Int.init) {
            do {
                // The extension fetches the URL the alert carries (the app's own path when it has none).
                let fetched = try await fetchWithRetry(
                    url: push.keys.richUrl ?? "/api/notifications/\(id)", installation: device.installation,
                    within: DeviceRules.seconds(rules.extensionSeconds))
                let limit = rules.attachmentBytes[push.keys.richType ?? ""] ?? Int.max
                event.sinceSentMicros = push.sentAt.map { Self.nowMicros() - $0 }
                if fetched.status != 200 {
                    event.event = "unattached"
                    event.status = fetched.status
                    event.detail = "the extension's fetch answered HTTP \(fetched.status): the original alert is shown"
                } else if fetched.body.count > limit {
                    event.event = "unattached"
                    event.detail = "\(fetched.body.count) bytes, over iOS's \(limit)-byte attachment limit: the original alert is shown"
                } else {
                    event.event = "fetched"
                    event.status = 200
                    event.detail = "attached by the extension: \(fetched.body.count) bytes, \(fetched.contentType ?? "?")"
                    attached = fetched
                }
            } catch {
                event.event = "unattached"
                event.detail =
                    "the extension's fetch failed within \(Int(rules.extensionSeconds)) s (\(error)): the original alert is shown"
            }
        } else {
            event.event = "unattached"
            event.detail = "richId is not an integer: the original alert is shown"
        }
        emit(event)
        return await presentSystemAlert(push, attached: attached, on: device, handle: handle, received: false)
    }

    /// The system shows the alert (with the extension's attachment, or its text alone); the user's
    /// More opens the app, which fetches what the extension did not. Whether it was shown.
    func presentSystemAlert(
        _ push: AppPush, attached: Fetched?, on device: (index: Int, installation: String), handle: String, received: Bool = true
    ) async -> Bool {
        var event = SimulatorEvent(
            event: "received", device: device.index, installation: device.installation, richId: push.keys.richId,
            richType: push.keys.richType, message: push.keys.richMessage, sinceSentMicros: push.sentAt.map { Self.nowMicros() - $0 })
        if received {
            event.detail = "shown by the system"
            emit(event)
        }
        if let shownAs = push.shownAs, !collapse.show(shownAs, on: handle) {
            event.event = "collapsed"
            event.detail = push.collapsed
            emit(event)
            return true
        }
        let message = push.keys.richMessage ?? ""
        event.event = "banner"
        event.status = nil
        event.detail =
            switch (push.platform, attached != nil) {
            case (.fcm, _): "notification in the shade, shown by the system: \(message) (action: More)"
            case (_, true): "system banner with the attachment: \(message) (action: More)"
            case (_, false): "system banner, the original alert without media: \(message) (action: More)"
            }
        event.sinceSentMicros = push.sentAt.map { Self.nowMicros() - $0 }
        emit(event)
        guard let id = push.keys.richId.flatMap(Int.init) else { return true }
        await receipt(id, "displayed", device.installation)
        guard let richType = push.keys.richType else { return true }
        switch configuration.tap {
        case .none:
            return true
        case .ok:
            event.event = "dismissed"
            event.detail = "banner ignored"
            emit(event)
            return true
        case .more:
            break
        }
        var fetched = attached
        if fetched == nil {
            // Opened: the app runs in the foreground and fetches the content itself.
            fetched = try? await fetchWithRetry(id, installation: device.installation, within: configuration.fetchBudget)
            if let answer = fetched, answer.status != 200 {
                event.event = "failed"
                event.status = answer.status
                event.detail = "the app's fetch on open answered HTTP \(answer.status)"
                emit(event)
                return true
            }
        }
        guard let fetched else {
            event.event = "failed"
            event.detail = "the app's fetch on open failed"
            emit(event)
            return true
        }
        await tap(push, id: id, richType: richType, fetched: fetched, active: false, event: &event, device: device)
        return true
    }
}
