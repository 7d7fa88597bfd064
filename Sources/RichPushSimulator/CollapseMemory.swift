import Synchronization

/// What iOS does with `apns-collapse-id`: a push whose collapse id matches a notification the
/// device still shows replaces it instead of showing a second one. Remembers the newest ids per
/// device (a bounded number, as Notification Center keeps a bounded number).
final class CollapseMemory: Sendable {
    private struct Shown {
        var order: [String] = []
        var ids: Set<String> = []
    }

    private let shown = Mutex<[String: Shown]>([:])
    private let perDevice: Int

    init(perDevice: Int = 64) {
        self.perDevice = perDevice
    }

    /// Notes `id` as shown on `device`; false when it was already there (the push collapses).
    func show(_ id: String, on device: String) -> Bool {
        shown.withLock { shown in
            var entry = shown[device, default: Shown()]
            guard entry.ids.insert(id).inserted else { return false }
            entry.order.append(id)
            if entry.order.count > perDevice { entry.ids.remove(entry.order.removeFirst()) }
            shown[device] = entry
            return true
        }
    }
}
