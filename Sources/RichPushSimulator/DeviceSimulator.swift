import Foundation
import Hiredis
package import Logging
import RichPushAdapters
import RichPushCore
import Synchronization

/// Simulated devices running the tutorial's app: iOS devices (platform `apns`), their Android
/// twins (platform `fcm`, reading the FCM data message) and web devices (platform `webpush`, a
/// browser's service worker). Each registers with the backend; phones listen on their channel of
/// the simulated hub (where `apns-sim` and `fcm-sim` also pass on what they accept), web devices
/// on their push service's WebSocket, decrypting each message with their own keys. For every push
/// the device does the background fetch, schedules the local notification (category `richPush`,
/// action `richPushMore` "More"), shows it as an alert or a banner (Android: a heads-up or a
/// notification in the shade; web: an in-page alert or the browser's notification), and lets the
/// simulated user press More, which opens the image view. The phones share one sharded Pub/Sub
/// connection per Redis node; a fleet of web devices only needs no Redis at all.
package final class DeviceSimulator: Sendable {
    package let configuration: SimulatorConfiguration
    /// Every step of every device, in order of occurrence.
    package let events: AsyncStream<SimulatorEvent>
    private let output: AsyncStream<SimulatorEvent>.Continuation
    let api: APIClient
    /// Every registered device by its hub address (its handle under the app: ``SimulatorConfiguration/hubAddress(of:)``; a web device by its endpoint).
    let devices = Mutex<[String: (index: Int, installation: String)]>([:])
    /// The tags each web device registered with: registered again with its next subscription.
    let webTags = Mutex<[Int: [String]]>([:])
    let subscriber: RedisShardedSubscriber
    /// The web devices, when some device is one.
    let web: WebDeviceFleet?
    /// The web devices' subscriptions and installations, kept beside the state file.
    let keptSubscriptions: KeptSubscriptions
    let collapse: CollapseMemory
    let logger: Logger
    /// The platforms' rules and each device's state under them; nil: lenient (every push wakes
    /// its app at once).
    let ruleBook: DeviceRuleBook?
    /// Simulated time starts here.
    let startedAt = ContinuousClock.now
    /// Set by ``stop()``: ends the waits of deferred pushes and of offline devices.
    let stopSignal = StopSignal()
    /// Set when the `offline` devices came back.
    let offlineDevicesBack = Atomic<Bool>(false)

    /// The notification category and action the tutorial's app registers.
    package static let category = "richPush"
    package static let moreAction = (identifier: "richPushMore", title: "More")

    /// Throws when the configuration's `stateFile` cannot be read or written, or when it has web
    /// devices and no push service (or the service's CA file cannot be read).
    package init(configuration: SimulatorConfiguration, logger: Logger = Logger(label: "richpush.device-sim")) throws {
        var configuration = configuration
        if let rules = configuration.rules {
            if let problem = rules.problem { throw SimulatorError(problem) }
            // The background fetch has the time iOS gives an app woken in the background.
            configuration.fetchBudget = DeviceRules.seconds(rules.backgroundSeconds)
        }
        ruleBook = configuration.rules.map(DeviceRuleBook.init)
        self.configuration = configuration
        collapse = try CollapseMemory(stateFile: configuration.stateFile)
        keptSubscriptions = KeptSubscriptions(stateFile: configuration.stateFile)
        if configuration.platforms.hasWeb {
            guard let service = configuration.webPush else {
                throw SimulatorError("web devices need a push service to subscribe at (--webpush-url)")
            }
            web = try WebDeviceFleet(service: service, logger: logger)
        } else {
            web = nil
        }
        self.logger = logger
        subscriber = RedisShardedSubscriber(
            locator: configuration.cluster.map { .cluster($0) } ?? .standalone(configuration.redis), logger: logger)
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
        let indices = 0..<configuration.devices
        let phones = indices.filter { configuration.platform(of: $0) != .webpush }
        var registered: [(String, Int, String)] = []
        try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
            var pending = phones[...]
            func add() {
                guard let index = pending.popFirst() else { return }
                let handle = configuration.handle(of: index)
                let address = configuration.hubAddress(of: index)
                let platform = configuration.platform(of: index)
                // Kept by its hub address: the hub's channels and held pushes name it so.
                group.addTask { (address, index, try await self.api.register(handle: handle, platform: platform, tags: tags(index))) }
            }
            for _ in 0..<32 { add() }
            while let result = try await group.next() {
                registered.append(result)
                emit(SimulatorEvent(event: "registered", device: result.1, installation: result.2, detail: conditionDetail(result.1)))
                add()
            }
        }
        devices.withLock { devices in
            for (handle, index, installation) in registered { devices[handle] = (index, installation) }
        }
        // A browser subscribes at its push service first, then registers the subscription; one
        // that kept its subscription (a restart) registers it again under its installation.
        if let web {
            let kept = keptSubscriptions
            try await web.subscribe(indices.filter { configuration.platform(of: $0) == .webpush }, kept: { kept.entry(for: $0)?.device }) {
                device in
                self.webTags.withLock { $0[device.index] = tags(device.index) }
                let installation: String
                if let entry = kept.entry(for: device.index), entry.device.endpoint == device.endpoint,
                    try await self.api.reregister(
                        installation: entry.installation, platform: .webpush, tags: tags(device.index),
                        subscription: device.subscriptionJSON)
                {
                    installation = entry.installation
                } else {
                    installation = try await self.api.register(
                        handle: device.endpoint, platform: .webpush, tags: tags(device.index),
                        subscription: device.subscriptionJSON)
                }
                kept.keep(device, installation: installation)
                self.devices.withLock { $0[device.endpoint] = (device.index, installation) }
                self.emit(
                    SimulatorEvent(
                        event: "registered", device: device.index, installation: installation, detail: self.conditionDetail(device.index)))
            }
            // One write for the whole fleet, not one per device.
            try kept.save()
        }
        // An offline device subscribes when it comes back (``run(limit:)``).
        let online = registered.filter { !isOffline($0.1) }
        guard !online.isEmpty else { return }
        let hub = OfflineStore(prefix: configuration.hubPrefix)
        try await subscriber.ssubscribe(online.map { hub.channel($0.0) })
    }

    /// Handles pushes until `stop()` (or until `limit` pushes were handled); each push runs on
    /// its own task, so a slow fetch does not hold up the others.
    package func run(limit: Int? = nil) async throws {
        let subscriber = self.subscriber
        let hub = OfflineStore(prefix: configuration.hubPrefix)
        let handled = HandledCounter()
        let held = try await takeHeldPushes(of: { !self.isOffline($0) })
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
            if let rules = configuration.rules, configuration.devices > 0 {
                group.addTask {
                    // Offline devices come back after their time off the network: they subscribe
                    // and take what the hub held for them, as a phone back online.
                    guard !(await self.stopSignal.sleep(for: rules.real(rules.offlineSeconds))) else { return }
                    for (handle, envelope) in await self.bringOfflineDevicesOnline() {
                        await self.handle(envelope: envelope, handle: handle)
                        if let limit, handled.increment() >= limit { await self.stop() }
                    }
                    // Then, as the app opens, what the platform did not keep for them.
                    await withDiscardingTaskGroup { catchUps in
                        for (handle, device) in self.offlineDevices {
                            catchUps.addTask { await self.catchUp(device, handle: handle) }
                        }
                    }
                }
            }
            if let web = self.web {
                group.addTask {
                    await web.run(
                        WebDeviceFleet.Handlers(
                            message: { device, message in
                                await self.handle(web: message, from: device)
                                if let limit, handled.increment() >= limit { await self.stop() }
                            },
                            resubscribed: { old, new in
                                try await self.reregister(old, as: new)
                            }))
                }
            }
            // After a dropped connection the hub held what it could not deliver: take it, as a
            // phone does when it is back online.
            group.addTask {
                for await _ in subscriber.restorations {
                    for (handle, envelope) in await self.takeHeldPushesRetrying(of: { !self.isOffline($0) }) {
                        await self.handle(envelope: envelope, handle: handle)
                        if let limit, handled.increment() >= limit { await self.stop() }
                    }
                }
            }
            group.addTask {
                await withDiscardingTaskGroup { inner in
                    for await message in subscriber.messages {
                        guard let handle = hub.handle(ofChannel: message.channel) else { continue }
                        guard self.configuration.fetch || self.ruleBook != nil else {
                            // Nothing to wait for without the background fetch nor rules that
                            // defer: handle it here, not on a task of its own (a task per push
                            // cost more than the push).
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

    /// Unsubscribes every device, closes the web devices' connections, and ends `run()`.
    package func stop() async {
        stopSignal.stop()
        await subscriber.close()
        await web?.stop()
    }

    func emit(_ event: SimulatorEvent) {
        var event = event
        event.at = Self.nowMicros()
        if let sink = configuration.eventSink { sink(event) } else { output.yield(event) }
    }

    static func nowMicros() -> Int { Int((Date().timeIntervalSince1970 * 1_000_000).rounded()) }

    /// The held pushes of the phones whose index `included` accepts (a web device's push service
    /// holds its own messages).
    func takeHeldPushes(of included: (Int) -> Bool = { _ in true }) async throws -> [(String, [UInt8])] {
        let handles = devices.withLock {
            $0.filter { configuration.platform(of: $0.value.index) != .webpush && included($0.value.index) }.map(\.key)
        }
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
    func takeHeldPushesRetrying(of included: (Int) -> Bool = { _ in true }) async -> [(String, [UInt8])] {
        for attempt in 1...10 {
            do {
                return try await takeHeldPushes(of: included)
            } catch {
                logger.warning("cannot take held pushes yet", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        return []
    }

    /// Every device's held pushes that have not expired, 1,000 devices per pipeline.
    private func takeHeldPushes(_ handles: [String], on connection: any RedisClient) async throws -> [(String, [UInt8])] {
        try await OfflineStore(prefix: configuration.hubPrefix).take(
            handles, now: Int64((Date().timeIntervalSince1970 * 1000).rounded()), on: connection
        )
        .map { ($0.handle, $0.envelope) }
    }

}

/// Counts handled pushes across the simulator's tasks.
final class HandledCounter: Sendable {
    private let count = Atomic<Int>(0)

    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
