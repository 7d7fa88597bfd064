import Foundation
import Synchronization

/// Where a simulator with a state file keeps its browsers' push subscriptions and installations
/// (`<state file>.web.json`), so that a restarted simulator goes on with them as a restarted
/// browser does (`PushManager.getSubscription()` gives back the one it had): the same endpoint,
/// keys and registration, not a new subscription registered as a new installation beside the old.
final class KeptSubscriptions: Sendable {
    struct Entry: Codable, Sendable {
        let device: WebDevice
        let installation: String
    }

    private let file: URL?
    private let entries: Mutex<[Int: Entry]>

    /// Reads what an earlier run kept (nothing without a state file, or from a file that cannot
    /// be read: its browsers subscribe afresh).
    init(stateFile: URL?) {
        file = stateFile.map { URL(fileURLWithPath: $0.path + ".web.json") }
        var kept: [Int: Entry] = [:]
        if let file, let data = try? Data(contentsOf: file), let decoded = try? JSONDecoder().decode([Entry].self, from: data) {
            for entry in decoded { kept[entry.device.index] = entry }
        }
        entries = Mutex(kept)
    }

    /// The subscription and installation device `index` had.
    func entry(for index: Int) -> Entry? { entries.withLock { $0[index] } }

    /// Keeps `device`'s subscription under `installation`; written to the file by ``save()``.
    func keep(_ device: WebDevice, installation: String) {
        entries.withLock { $0[device.index] = Entry(device: device, installation: installation) }
    }

    /// Writes what is kept (the file rewritten whole): once after the devices subscribed at
    /// start, and after each new subscription.
    func save() throws {
        guard let file else { return }
        try entries.withLock { entries in
            let data = try JSONEncoder().encode(entries.values.sorted { $0.device.index < $1.device.index })
            try data.write(to: file, options: .atomic)
        }
    }
}
