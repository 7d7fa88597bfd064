import AsyncHTTPClient
import Foundation
import Logging
import NIOSSL
import Synchronization

/// A simulator's web devices: each subscribes at the push service as a browser's `PushManager`
/// does, then keeps its WebSocket connected (again after a drop, with back-off: 0.1 s doubling to
/// 5 s) and passes each message it receives on, every message on a task of its own. When the
/// service ends a subscription (an `expired` frame, or a refused upgrade), the device subscribes
/// again with new keys and hands the new subscription to be registered, as a service worker does
/// on `pushsubscriptionchange`. Nothing here blocks an event loop: the sockets are NIO channels
/// read from tasks.
final class WebDeviceFleet: Sendable {
    private let service: SimulatorConfiguration.WebPushService
    private let tls: TLSConfiguration
    private let context: NIOSSLContext
    private let devices = Mutex<[WebDevice]>([])
    private let sockets = Mutex<[Int: PushServiceSocket]>([:])
    private let stopped = StopSignal()
    /// Devices whose subscription their browser revoked: they stay off their push service.
    private let revoked = Mutex<Set<Int>>([])
    private let logger: Logger

    /// Throws when the CA file cannot be read.
    init(service: SimulatorConfiguration.WebPushService, logger: Logger) throws {
        self.service = service
        self.logger = logger
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = service.caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile.path))
            } catch {
                throw SimulatorError("cannot read the push service's CA file \(caFile.path): \(error)")
            }
        }
        self.tls = tls
        var socketTLS = tls
        socketTLS.applicationProtocols = ["http/1.1"]
        context = try NIOSSLContext(configuration: socketTLS)
    }

    /// Subscribes the devices `indices` (up to 32 at a time; those `kept` has a subscription for
    /// go on with it) and calls `registered` for each as it gets its subscription; the client for
    /// it lives only as long as this call.
    func subscribe(
        _ indices: [Int], kept: @escaping @Sendable (Int) -> WebDevice? = { _ in nil },
        then registered: @escaping @Sendable (WebDevice) async throws -> Void
    ) async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        do {
            try await withThrowingTaskGroup(of: WebDevice.self) { group in
                var pending = indices[...]
                func add() {
                    guard let index = pending.popFirst() else { return }
                    group.addTask {
                        let device: WebDevice
                        if let known = kept(index) {
                            device = known
                        } else {
                            device = try await WebDevice.subscribe(index: index, at: self.service, http: http)
                        }
                        try await registered(device)
                        return device
                    }
                }
                for _ in 0..<32 { add() }
                while let device = try await group.next() {
                    devices.withLock { $0.append(device) }
                    add()
                }
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    var isEmpty: Bool { devices.withLock { $0.isEmpty } }

    /// What a device does with a message, and with a new subscription of its own (`old`, `new`:
    /// register `new` in place of `old`; a throw makes it try again after a back-off).
    struct Handlers: Sendable {
        let message: @Sendable (WebDevice, PushServiceFrame.Message) async -> Void
        let resubscribed: @Sendable (_ old: WebDevice, _ new: WebDevice) async throws -> Void
    }

    /// Keeps every device connected and hands each message to `handle`, until ``stop()``; then
    /// waits for the messages in hand.
    func run(_ handlers: Handlers) async {
        let devices = devices.withLock { $0 }
        await withDiscardingTaskGroup { group in
            for device in devices {
                group.addTask { await self.keepConnected(device, handlers) }
            }
        }
    }

    /// A new subscription for `device` (new keys, new endpoint), registered through
    /// `resubscribed`, in the fleet's list in place of the old one.
    private func resubscribe(_ device: WebDevice, _ handlers: Handlers) async throws -> WebDevice {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let fresh: WebDevice
        do {
            fresh = try await WebDevice.subscribe(index: device.index, at: service, http: http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        try await handlers.resubscribed(device, fresh)
        devices.withLock { devices in
            if let at = devices.firstIndex(where: { $0.index == device.index }) { devices[at] = fresh }
        }
        return fresh
    }

    /// Revokes device `index`'s subscription, as Safari does: unsubscribes at the push service
    /// (`DELETE /subscription/<id>`: later pushes to it are refused) and closes its connection,
    /// which is not opened again.
    func revoke(_ index: Int) async throws {
        guard revoked.withLock({ $0.insert(index).inserted }), let device = devices.withLock({ $0.first { $0.index == index } }) else {
            return
        }
        let socket = sockets.withLock { $0.removeValue(forKey: index) }
        await socket?.close()
        var request = HTTPClientRequest(url: service.url.appendingPathComponent("subscription/\(device.subscriptionId)").absoluteString)
        request.method = .DELETE
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let status: UInt
        do {
            status = try await http.execute(request, timeout: .seconds(30)).status.code
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        // 404: the service had already forgotten it.
        guard status == 204 || status == 404 else { throw SimulatorError("the push service answered \(status) to the unsubscribe") }
    }

    /// Closes every connection and ends ``run(handle:)`` once the messages in hand are handled.
    func stop() async {
        stopped.stop()
        let open = sockets.withLock { sockets in
            defer { sockets = [:] }
            return Array(sockets.values)
        }
        for socket in open { await socket.close() }
    }

    private func keepConnected(_ first: WebDevice, _ handlers: Handlers) async {
        var device = first
        await withDiscardingTaskGroup { pushes in
            var delay = service.reconnectDelay.first
            // The service ended the subscription: a new one is needed before connecting again.
            var ended = false
            while !stopped.isStopped, !revoked.withLock({ $0.contains(device.index) }) {
                let metadata: Logger.Metadata = ["device": "\(device.index)", "subscription": "\(device.subscriptionId)"]
                do {
                    if ended {
                        device = try await resubscribe(device, handlers)
                        ended = false
                        logger.info(
                            "the push service ended the subscription; subscribed again",
                            metadata: metadata.merging(["new.subscription": "\(device.subscriptionId)"]) { $1 })
                    }
                    let socket = try await PushServiceSocket.connect(to: device.webSocket, tls: context)
                    let kept = sockets.withLock { sockets in
                        // Checked under the lock `stop()` empties: a socket opened as it ran is closed here.
                        guard !stopped.isStopped else { return false }
                        sockets[device.index] = socket
                        return true
                    }
                    guard kept else {
                        await socket.close()
                        break
                    }
                    let receiving = device
                    try await socket.run { text in
                        switch PushServiceFrame(text: text) {
                        case .hello:
                            // Registered at the service: a later drop starts its back-off afresh.
                            delay = service.reconnectDelay.first
                        case .message(let message):
                            pushes.addTask { await handlers.message(receiving, message) }
                        case .expired:
                            ended = true
                        case .other(let what):
                            logger.debug("frame passed over", metadata: metadata.merging(["frame": "\(what)"]) { $1 })
                        }
                    }
                    sockets.withLock { _ = $0.removeValue(forKey: device.index) }
                    if stopped.isStopped || revoked.withLock({ $0.contains(device.index) }) { break }
                    if ended { continue }
                    logger.warning("the push service closed the connection; connecting again", metadata: metadata)
                } catch let refused as PushServiceSocket.Refused {
                    // The service no longer knows the subscription: connecting again cannot help.
                    if stopped.isStopped { break }
                    ended = true
                    logger.warning(
                        "the push service refused the subscription; subscribing again",
                        metadata: metadata.merging(["error": "\(refused)"]) { $1 })
                } catch {
                    sockets.withLock { _ = $0.removeValue(forKey: device.index) }
                    if stopped.isStopped { break }
                    logger.warning(
                        "cannot reach the push service; trying again",
                        metadata: metadata.merging(["error": "\(error)", "retry.in": "\(delay)"]) { $1 })
                }
                if await stopped.sleep(for: delay) { break }
                delay = min(delay * 2, service.reconnectDelay.max)
            }
        }
    }
}
