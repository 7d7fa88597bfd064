import ArgumentParser
import RichPushCore
import RichPushStorage

extension UsersCommand {
    /// `richpush users set-role NAME viewer|operator|admin|none [--apps a,b]`: who may sign in to
    /// the operator's console and what they may do there (docs/console.md).
    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-role",
            abstract: "Give a user a role in the operator's console (/console), or take it away.",
            discussion: """
                viewer sees every page but the audit log; operator also replays dead letters; admin also reads the audit log; \
                none takes the console away. Console users are the default app's users; --apps limits what they see and act on \
                to those apps. Signed-in sessions follow the change at their next request.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "User name (a user of the default app, from `richpush users add`).") var name: String
        @Argument(help: "viewer, operator, admin, or none.") var role: String
        @Option(help: ArgumentHelp("Only these apps, comma-separated (default: every app).", valueName: "app,…")) var apps: String?

        func validate() throws {
            if let problem = User.validate(name: name) { throw ValidationError(problem) }
            guard role == "none" || ConsoleAccess.Role(rawValue: role) != nil else {
                throw ValidationError("role must be viewer, operator, admin or none")
            }
            if role == "none", apps != nil { throw ValidationError("--apps goes with a role, not with none") }
            if let apps, case .failure(let problem) = ConsoleAccess.parseApps(apps) { throw ValidationError("--apps: \(problem)") }
        }

        func run() async throws {
            var access: ConsoleAccess?
            if let role = ConsoleAccess.Role(rawValue: role) {
                access = ConsoleAccess(role: role, apps: try apps.map { try ConsoleAccess.parseApps($0).get() })
            }
            let connection = try await connect(redis, clientName: "richpush-users")
            let updated = try await RedisUserStore(redis: connection, keys: queue.storageKeys(redis)).setConsoleAccess(name: name, access)
            await connection.close()
            guard updated else { throw CLIError("no user \(name) (console users are the default app's: richpush users add \(name))") }
            if let access {
                print(
                    "\(name) is a console \(access.role.rawValue)"
                        + (access.apps.map { " of \($0.joined(separator: ", "))" } ?? " of every app"))
            } else {
                print("\(name) has no console role")
            }
        }
    }
}
