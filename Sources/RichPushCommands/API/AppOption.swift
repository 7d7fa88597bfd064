import ArgumentParser
import Hiredis
import RichPushApps
import RichPushCore
import RichPushStorage

/// `--app`: the app whose users and keys a command manages (the default app when not given).
struct AppOption: ParsableArguments {
    @Option(help: "The app whose users or keys these are (see `richpush apps list`).") var app: String = AppID.default.rawValue

    func validate() throws {
        if let problem = AppID.problem(app) { throw ValidationError("--app: \(problem)") }
    }

    /// `keys` for this app, once Redis says the app exists (the default app always does).
    func keys(_ keys: StorageKeys, on connection: any RedisClient) async throws -> StorageKeys {
        try await Self.keys(keys, app: app, on: connection)
    }

    /// `keys` for app `app`, once Redis says it exists (a CLI message if the id is not one).
    static func keys(_ keys: StorageKeys, app: String, on connection: any RedisClient) async throws -> StorageKeys {
        if let problem = AppID.problem(app) { throw CLIError("app '\(app.prefix(64))': \(problem)") }
        let id = AppID(unchecked: app)
        if !id.isDefault, try await RedisAppStore(redis: connection, keys: AppKeys(prefix: keys.prefix), ring: nil).summary(id: id) == nil {
            throw CLIError("no app '\(app)' (create it with richpush apps create \(app); see docs/apps.md)")
        }
        return keys.forApp(id)
    }
}
