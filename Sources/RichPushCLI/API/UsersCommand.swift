public import ArgumentParser
import Foundation
import HummingbirdBcrypt
public import RichPushCore
import RichPushStorage

/// `richpush users add|remove|list|passwd`.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Manage API users (passwords stored as bcrypt hashes).",
        subcommands: [Add.self, Remove.self, List.self, Passwd.self])

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
                guard let value = ProcessInfo.processInfo.environment[name] else { throw CLIError("environment variable \(name) is not set") }
                return value
            }
            guard let line = readLine(strippingNewline: true) else { throw CLIError("give --password, --password-env or the password on stdin") }
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
        @OptionGroup var secret: PasswordOptions
        @Argument(help: "User name (letters, digits, _ . @ -).") var name: String
        @Option(help: "user or admin.") var role: User.Role = .user

        func validate() throws {
            if let problem = User.validate(name: name) { throw ValidationError(problem) }
        }

        func run() async throws {
            let hash = try secret.hash()
            let connection = try await connect(redis, clientName: "richpush-users")
            let created = try await RedisUserStore(redis: connection, keys: queue.storageKeys).create(User(name: name, role: role), passwordHash: hash)
            await connection.close()
            guard created else { throw CLIError("user \(name) already exists (use `richpush users passwd`)") }
            print("added \(role.rawValue) \(name)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument var name: String

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-users")
            let removed = try await RedisUserStore(redis: connection, keys: queue.storageKeys).remove(name: name)
            await connection.close()
            guard removed else { throw CLIError("no user \(name)") }
            print("removed \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users and their roles.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-users")
            let users = try await RedisUserStore(redis: connection, keys: queue.storageKeys).list()
            await connection.close()
            for user in users { print("\(user.name)\t\(user.role.rawValue)") }
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a user's password (and optionally role).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var secret: PasswordOptions
        @Argument var name: String
        @Option(help: "New role: user or admin.") var role: User.Role?

        func run() async throws {
            let hash = try secret.hash()
            let connection = try await connect(redis, clientName: "richpush-users")
            let updated = try await RedisUserStore(redis: connection, keys: queue.storageKeys).update(name: name, passwordHash: hash, role: role)
            await connection.close()
            guard updated else { throw CLIError("no user \(name)") }
            print("updated \(name)")
        }
    }
}

extension User.Role: ExpressibleByArgument {}
