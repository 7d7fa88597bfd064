import Foundation
import Hiredis
package import Logging
import RichPushAdapters
import RichPushCore
import Synchronization

/// Simulated phones running the tutorial's app: iOS devices (platform `apns`) and their Android
/// twins (platform `fcm`, reading the FCM data message). Each registers with the backend, listens
/// on its channel of the simulated hub (where `apns-sim` and `fcm-sim` also pass on what they
/// accept), and for every silent push does the background fetch, schedules the local notification
/// (category `richPush`, action `richPushMore` "More"), shows it as an alert or a banner (Android:
/// a heads-up or a notification in the shade), and lets the simulated user press More, which opens
/// the image view. The devices share one sharded Pub/Sub connection per Redis node.
package final class DeviceSimulator: Sendable {
    package let configuration: SimulatorConfiguration
    /// Every step of every device, in order of occurrence.
    package let events: AsyncStream<SimulatorEvent>
    private let output: AsyncStream<SimulatorEvent>.Continuation
    private let api: APIClient
    private let devices = Mutex<[String: (index: Int, installation: String)]>([:])
    private let subscriber: RedisShardedSubscriber
    private let collapse: CollapseMemory
    private let logger: Logger

    /// The notification category and action the tutorial's app registers.
    package static let category = "richPush"
    package static let moreAction = (identifier: "richPushMore", title: "More")

    /// Throws when the configuration's `stateFile` cannot be read or written.
    package init(configuration: SimulatorConfiguration, logger: Logger = Logger(label: "richpush.device-sim")) throws {
        self.configuration = configuration
        collapse = try CollapseMemory(stateFile: configuration.stateFile)
        self.logger = logger
        subscriber = RedisShardedSubscriber(locator: configuration.cluster.map { .cluster($0) } ?? .standalone(configuration.redis), logger: logger)
        (events, output) = AsyncStream.makeStream(of: SimulatorEvent.self)
        api = APIClient(base: configuration.apiBaseURL, user: configuration.user, password: configuration.password)
    }

    /// Registers the devices (the seed's two calls each) and subscribes to their channels; held
    /// pushes that arrived while they were offline are delivered now, as APNs does.
    package func start() async throws {
        try await start(tags: { _ in [] })
    }

    /// As ``start()``, with extra tags per device index (load tests address devices by tag).
    package func start(tags: @escaping @Sendable (Int) -> [String]) async throws {
        var registered: [(String, Int, String)] = []
        try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                let handle = configuration.handle(of: index)
                let platform = configuration.platform(of: index)
                group.addTask { (handle, index, try await self.api.register(handle: handle, platform: platform, tags: tags(index))) }
            }
            for _ in 0..<min(32, configuration.devices) { add() }
            while let result = try await group.next() {
                registered.append(result)
                emit(SimulatorEvent(event: "registered", device: result.1, installation: result.2))
                if next < configuration.devices { add() }
            }
        }
        devices.withLock { devices in
            for (handle, index, installation) in registered { devices[handle] = (index, installation) }
        }
        let hold = HubHold(prefix: configuration.hubPrefix)
        try await subscriber.ssubscribe(registered.map { hold.channel($0.0) })
    }

    /// Handles pushes until `stop()` (or until `limit` pushes were handled); each push runs on
    /// its own task, so a slow fetch does not hold up the others.
    package func run(limit: Int? = nil) async throws {
        let subscriber = self.subscriber
        let hold = HubHold(prefix: configuration.hubPrefix)
        let handled = HandledCounter()
        let held = try await takeHeldPushes()
        // Discarding groups: a long run handles millions of pushes, and a plain task group keeps
        // every finished child until it is awaited.
        await withDiscardingTaskGroup { group in
            for push in held {
                let (handle, envelope) = push
                group.addTask {
                    await self.handle(envelope: envelope, handle: handle)
                    if let limit, handled.increment() >= limit { await self.stop() }
                }
            }
            group.addTask { await subscriber.run() }
            // After a dropped connection the hub held what it could not deliver: take it, as a
            // phone does when it is back online.
            group.addTask {
                for await _ in subscriber.restorations {
                    for (handle, envelope) in await self.takeHeldPushesRetrying() {
                        await self.handle(envelope: envelope, handle: handle)
                        if let limit, handled.increment() >= limit { await self.stop() }
                    }
                }
            }
            group.addTask {
                await withDiscardingTaskGroup { inner in
                    for await message in subscriber.messages {
                        guard let handle = hold.handle(ofChannel: message.channel) else { continue }
                        guard self.configuration.fetch else {
                            // Nothing to wait for without the background fetch: handle it here,
                            // not on a task of its own (a task per push cost more than the push).
                            await self.handle(envelope: message.payload, handle: handle)
                            if let limit, handled.increment() >= limit { await self.stop() }
                            continue
                        }
                        inner.addTask {
                            await self.handle(envelope: message.payload, handle: handle)
                            if let limit, handled.increment() >= limit { await self.stop() }
                        }
                    }
                }
            }
        }
        output.finish()
    }

    /// Unsubscribes every device and ends `run()`.
    package func stop() async {
        await subscriber.close()
    }

    private func takeHeldPushes() async throws -> [(String, [UInt8])] {
        let handles = devices.withLock { Array($0.keys) }
        guard !handles.isEmpty else { return [] }
        if let cluster = configuration.cluster { return try await takeHeldPushes(handles, on: cluster) }
        let connection = RedisConnection(configuration: configuration.redis, logger: logger)
        do {
            let held = try await takeHeldPushes(handles, on: connection)
            await connection.close()
            return held
        } catch {
            await connection.close()
            throw error
        }
    }

    /// As ``takeHeldPushes()``, tried again (up to 10 times, 0.5 s apart) while Redis refuses:
    /// right after a restore Redis may still be loading.
    private func takeHeldPushesRetrying() async -> [(String, [UInt8])] {
        for attempt in 1...10 {
            do {
                return try await takeHeldPushes()
            } catch {
                logger.warning("cannot take held pushes yet", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        return []
    }

    /// Every device's held pushes that have not expired, 1,000 devices per pipeline.
    private func takeHeldPushes(_ handles: [String], on connection: any RedisClient) async throws -> [(String, [UInt8])] {
        try await HubHold(prefix: configuration.hubPrefix).take(handles, now: Int64((Date().timeIntervalSince1970 * 1000).rounded()), on: connection)
            .map { ($0.handle, $0.envelope) }
    }

    // MARK: - One push, as the tutorial's app handles it

    /// The background fetch, tried again with back-off (0.1 s doubling to 2 s) while the API is
    /// unreachable or answers 5xx, within `fetchBudget`; the last answer or error stands.
    private func fetchWithRetry(_ id: Int, installation: String) async throws -> (status: Int, body: Data, contentType: String?) {
        let deadline = ContinuousClock.now + configuration.fetchBudget
        var delay = Duration.milliseconds(100)
        while true {
            do {
                let answer = try await api.call("GET", "/api/notifications/\(id)?installation=\(installation)")
                if answer.status < 500 || ContinuousClock.now + delay > deadline { return answer }
            } catch {
                if ContinuousClock.now + delay > deadline { throw error }
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(2))
        }
    }

    private func handle(envelope bytes: [UInt8], handle: String) async {
        guard let device = devices.withLock({ $0[handle] }) else { return }
        let now = Self.nowMicros()
        guard let envelope = ReceivedPush(json: bytes) else {
            emit(SimulatorEvent(event: "failed", device: device.index, installation: device.installation, detail: "push is not JSON"))
            return
        }
        let sentAt = envelope.sentAt
        func since() -> Int? { sentAt.map { Self.nowMicros() - $0 } }
        let android = configuration.platform(of: device.index) == .fcm
        guard let keys = envelope.payload.keys(for: android ? .fcm : .apns) else {
            emit(SimulatorEvent(event: "failed", device: device.index, installation: device.installation,
                                detail: "not an FCM data message: the Android app reads its keys from the message's data"))
            return
        }
        let richId = keys.richId
        let richType = keys.richType
        let message = keys.richMessage
        var event = SimulatorEvent(event: "received", device: device.index, installation: device.installation, richId: richId, richType: richType,
                                   message: message, sinceSentMicros: sentAt.map { now - $0 })
        // A resend of the same notification under the same collapse id is replaced, not shown
        // again; another notification with that collapse id replaces it and is shown. The
        // Android app drops a richId it has shown (FCM gets no collapse key of ours: a resend
        // after a crash arrives as a message of its own).
        let shownAs = android ? richId.map { "richId#\($0)" } : envelope.id.map { "\($0)#\(richId ?? "")" }
        if let shownAs, !collapse.show(shownAs, on: handle) {
            // A resend (a worker died between send and record) replaces what the device shows.
            event.event = "collapsed"
            event.detail = android ? "richId \(richId ?? "") is already shown: dropped" : "collapse id \(envelope.id ?? "") is already shown: replaced, not shown again"
            emit(event)
            return
        }
        emit(event)
        guard configuration.fetch else { return }
        // didReceiveRemoteNotification: richId as int, then by rich type.
        guard let id = richId.flatMap(Int.init) else {
            event.event = "failed"
            event.detail = "richId is not an integer"
            emit(event)
            return
        }
        guard let richType, ["img", "url", "sound", "text"].contains(richType) else {
            event.event = "failed"
            event.detail = "unsupported rich type '\(richType ?? "none")'"
            emit(event)
            return
        }
        let fetched: (status: Int, body: Data, contentType: String?)
        do {
            fetched = try await fetchWithRetry(id, installation: device.installation)
        } catch {
            event.event = "failed"
            event.detail = "fetch failed: \(error)"
            emit(event)
            return
        }
        guard fetched.status == 200 else {
            event.event = "failed"
            event.status = fetched.status
            event.detail = "background fetch answered HTTP \(fetched.status): \(String(decoding: fetched.body.prefix(200), as: UTF8.self))"
            emit(event)
            return
        }
        event.event = "fetched"
        event.status = 200
        event.detail = "\(fetched.body.count) bytes, \(fetched.contentType ?? "?")"
        event.sinceSentMicros = since()
        emit(event)

        // The local notification fires after the delay ("to give you time to leave the app").
        event.event = "scheduled"
        event.detail = "category \(Self.category), fires in \(configuration.fireDelay)"
        emit(event)
        if configuration.fireDelay > .zero { try? await Task.sleep(for: configuration.fireDelay) }
        let active = configuration.appState == .active || (configuration.appState == .mixed && device.index % 2 == 0)
        event.event = active ? "alert" : "banner"
        event.detail = switch (android, active) {
        case (false, true): "in-app alert \"Notification\": \(message ?? "") [OK] [More]"
        case (false, false): "system banner: \(message ?? "") (action: More)"
        case (true, true): "heads-up notification \"Notification\": \(message ?? "") [More]"
        case (true, false): "notification in the shade: \(message ?? "") (action: More)"
        }
        event.sinceSentMicros = since()
        emit(event)
        await receipt(id, "displayed", device.installation)

        switch configuration.tap {
        case .none:
            return
        case .ok:
            event.event = "dismissed"
            event.detail = active ? "OK" : "banner ignored"
            emit(event)
        case .more:
            event.event = "opened"
            event.detail = active ? "More → image view" : "banner tapped → app opened on the image view"
            event.path = save(fetched.body, id: id, device: device.index, richType: richType, contentType: fetched.contentType)
            if richType == "url" { event.detail = "opened \(String(decoding: fetched.body, as: UTF8.self))" }
            event.sinceSentMicros = since()
            emit(event)
            await receipt(id, "opened", device.installation)
        }
    }

    private func receipt(_ id: Int, _ kind: String, _ installation: String) async {
        guard configuration.sendReceipts else { return }
        do {
            let (status, body, _) = try await api.call("POST", "/api/notifications/\(id)/receipts", json: ["kind": kind, "installation": installation])
            if status != 200 { logger.warning("receipt refused", metadata: ["status": "\(status)", "body": "\(String(decoding: body, as: UTF8.self))"]) }
        } catch {
            logger.warning("receipt failed", metadata: ["error": "\(error)"])
        }
    }

    private func save(_ bytes: Data, id: Int, device: Int, richType: String, contentType: String?) -> String? {
        guard let directory = configuration.outDirectory else { return nil }
        let ext = switch contentType?.split(separator: ";").first.map(String.init) {
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

    private func emit(_ event: SimulatorEvent) {
        var event = event
        event.at = Self.nowMicros()
        if let sink = configuration.eventSink { sink(event) } else { output.yield(event) }
    }

    static func nowMicros() -> Int { Int((Date().timeIntervalSince1970 * 1_000_000).rounded()) }
}

/// Counts handled pushes across the simulator's tasks.
final class HandledCounter: Sendable {
    private let count = Atomic<Int>(0)

    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
