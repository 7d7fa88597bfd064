import ArgumentParser
import Foundation
import HummingbirdBcrypt
package import RichPushCore
import RichPushQueue
import RichPushStorage

/// `richpush users add|remove|list|passwd`.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage API users (passwords stored as bcrypt hashes).",
        subcommands: [Add.self, Remove.self, List.self, Passwd.self, Unlock.self, SetRole.self])

    /// The password from --password, or the environment variable named by --password-env, or stdin.
    struct PasswordOptions: ParsableArguments {
        @Option(help: "The password (visible in `ps`; prefer --password-env or stdin).") var password: String?
        @Option(help: "Read the password from this environment variable.") var passwordEnv: String?
        @Option(help: "bcrypt cost, 4 to 31 (each step doubles the work).") var cost: UInt8 = 12

        func validate() throws {
            guard (4...31).contains(cost) else { throw ValidationError("--cost must be 4 to 31") }
        }

        func read() throws -> String {
            if let password { return password }
            if let name = passwordEnv {
                guard let value = ProcessInfo.processInfo.environment[name] else {
                    throw CLIError("environment variable \(name) is not set")
                }
                return value
            }
            guard let line = readLine(strippingNewline: true) else {
                throw CLIError("give --password, --password-env or the password on stdin")
            }
            return line
        }

        func hash() throws -> String {
            let password = try read()
            guard (1...72).contains(password.utf8.count) else { throw CLIError("a password is 1 to 72 bytes (bcrypt's limit)") }
            return Bcrypt.hash(password, cost: cost)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @OptionGroup var secret: PasswordOptions
        @Argument(help: "User name (letters, digits, _ . @ -).") var name: String
        @Option(help: "user or admin.") var role: User.Role = .user

        func validate() throws {
            if let problem = User.validate(name: name) { throw ValidationError(problem) }
        }

        func run() async throws {
            let hash = try secret.hash()
            let connection = try await connect(redis, clientName: "richpush-users")
            let created = try await RedisUserStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .create(User(name: name, role: role), passwordHash: hash)
            await connection.close()
            guard created else { throw CLIError("user \(name) already exists (use `richpush users passwd`)") }
            print("added \(role.rawValue) \(name)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user and everything they own.",
            discussion:
                "Deletes the user, their registrations, the notifications they created (records, status, payload index) and their API keys, so a new user of the same name starts empty."
        )
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @Argument var name: String

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-users")
            defer { Task { await connection.close() } }
            let keys = try await app.keys(queue.storageKeys(redis), on: connection)
            let removed = try await RedisUserStore(redis: connection, keys: keys).remove(name: name)
            // Even when the record is gone (a half-finished earlier removal), the data goes too.
            let devices = try await RedisInstallationStore(redis: connection, keys: keys).removeAll(owner: name)
            let store = RedisNotificationStore(
                redis: connection, keys: keys, queue: JobQueue(redis: connection, configuration: queue.configuration),
                retention: .seconds(86400))
            let notifications = try await store.forgetNotifications(createdBy: name)
            let apiKeys = try await RedisAPIKeyStore(redis: connection, keys: keys).revokeAll(user: name)
            let webhooks = try await RedisWebhookStore(redis: connection, keys: keys).deleteAll(owner: name)
            guard removed || devices + notifications + apiKeys + webhooks > 0 else { throw CLIError("no user \(name)") }
            print("removed \(name): \(devices) registrations, \(notifications) notifications, \(apiKeys) API keys, \(webhooks) webhooks")
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear a user's login throttle (every address, or one).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @Argument var name: String
        @Option(help: "Only this client address.") var address: String?

        func validate() throws {
            if let problem = User.validate(name: name) { throw ValidationError(problem) }
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-users")
            let cleared = try await RedisUserStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .unlock(user: name, address: address)
            await connection.close()
            print("cleared \(cleared) throttled address\(cleared == 1 ? "" : "es") of \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users and their roles.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-users")
            let users = try await RedisUserStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .list()
            await connection.close()
            for user in users { print("\(user.name)\t\(user.role.rawValue)") }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a user's password (and optionally role).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @OptionGroup var secret: PasswordOptions
        @Argument var name: String
        @Option(help: "New role: user or admin.") var role: User.Role?

        func run() async throws {
            let hash = try secret.hash()
            let connection = try await connect(redis, clientName: "richpush-users")
            let updated = try await RedisUserStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .update(name: name, passwordHash: hash, role: role)
            await connection.close()
            guard updated else { throw CLIError("no user \(name)") }
            print("updated \(name)")
        }
    }
}

extension User.Role: ExpressibleByArgument {}
