import Foundation
import Glibc
import Synchronization

/// What iOS does with `apns-collapse-id`: a push whose collapse id matches a notification the
/// device still shows replaces it instead of showing a second one. Remembers the newest ids per
/// device (a bounded number, as Notification Center keeps a bounded number).
///
/// With a state file it survives a restart of the simulator, as Notification Center survives the
/// app being killed: each new id is appended as one `device<TAB>id` line, and the file is read
/// back (and compacted to what is remembered) when the simulator starts.
final class CollapseMemory: Sendable {
    private struct Shown {
        var order: [String] = []
        var ids: Set<String> = []
    }

    private let shown = Mutex<[String: Shown]>([:])
    private let perDevice: Int
    /// Append-only descriptor of the state file, or -1. Written under the lock, one write per id.
    private let file: Int32

    init(perDevice: Int = 64, stateFile: URL? = nil) throws {
        self.perDevice = perDevice
        guard let stateFile else {
            file = -1
            return
        }
        var remembered: [String: Shown] = [:]
        if let text = try? String(contentsOf: stateFile, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "\t", maxSplits: 1)
                guard parts.count == 2 else { continue }  // a line cut by a kill
                Self.insert(String(parts[1]), into: &remembered[String(parts[0]), default: Shown()], keeping: perDevice)
            }
        }
        var compacted = ""
        for (device, entry) in remembered { for id in entry.order { compacted += "\(device)\t\(id)\n" } }
        try Data(compacted.utf8).write(to: stateFile, options: .atomic)
        file = open(stateFile.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard file >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: stateFile.path]) }
        shown.withLock { $0 = remembered }
    }

    deinit {
        if file >= 0 { close(file) }
    }

    /// Whether `id` is shown on `device` (a push with it collapses).
    func contains(_ id: String, on device: String) -> Bool {
        shown.withLock { $0[device]?.ids.contains(id) ?? false }
    }

    /// Notes `id` as shown on `device`; false when it was already there (the push collapses).
    func show(_ id: String, on device: String) -> Bool {
        shown.withLock { shown in
            guard Self.insert(id, into: &shown[device, default: Shown()], keeping: perDevice) else { return false }
            if file >= 0 {
                // A short append to a regular file: the page cache takes it without waiting.
                let line = Array("\(device)\t\(id)\n".utf8)
                _ = line.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            }
            return true
        }
    }

    @discardableResult
    private static func insert(_ id: String, into entry: inout Shown, keeping limit: Int) -> Bool {
        guard entry.ids.insert(id).inserted else { return false }
        entry.order.append(id)
        if entry.order.count > limit { entry.ids.remove(entry.order.removeFirst()) }
        return true
    }
}
