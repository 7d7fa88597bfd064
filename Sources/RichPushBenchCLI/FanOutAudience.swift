import Foundation
import Hiredis
import RichPushCommands
import RichPushCore
import RichPushStorage

/// A large audience for a benchmark's fan-out: N installations of one app under one tag, written
/// straight into Redis through the installation store (as the API would after parsing), many
/// at once. Nobody listens on their channels: the hub holds each push (the adapter accepted it),
/// which is what a fan-out to phones that are mostly asleep costs.
struct FanOutAudience {
    let app: AppID
    let tag: String
    let devices: Int
    /// The user who owns them (an admin of the app, who may send to any tag).
    let owner: String

    /// `APP=TAG:N`, e.g. `a=fan:200000`.
    init?(argument: String, owner: String) {
        let parts = argument.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let app = AppID(validating: parts[0]) else { return nil }
        let target = parts[1].split(separator: ":")
        guard target.count == 2, !target[0].isEmpty, let devices = Int(target[1]), devices > 0 else { return nil }
        self.app = app
        tag = String(target[0])
        self.devices = devices
        self.owner = owner
    }

    /// Registers the installations the tag does not have yet (a second run on the same Redis adds
    /// nothing); returns how many it wrote.
    func register(redis: any RedisClient, keys: StorageKeys, progress: (String) -> Void) async throws -> Int {
        let existing = try await redis.send("SCARD", keys.tag(tag)).int ?? 0
        guard existing < devices else { return 0 }
        progress("registering \(devices - existing) installations of app \(app) under tag \(tag)")
        let store = RedisInstallationStore(redis: redis, keys: keys)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let (app, tag, owner) = (app.rawValue, tag, owner)
        // Many saves in flight at once: the pool pipelines them, one script call each.
        try await withThrowingDiscardingTaskGroup { group in
            for lane in 0..<64 {
                group.addTask {
                    for index in stride(from: existing + lane, to: devices, by: 64) {
                        let installation = Installation(
                            id: "fan-\(app)-\(index)", platform: .fcm, handle: "fan-\(app)-\(tag)-\(index)", tags: [tag],
                            owner: owner, updatedAt: now)
                        _ = try await store.save(installation, limits: RegistrationLimits())
                    }
                }
            }
        }
        return devices - existing
    }
}
