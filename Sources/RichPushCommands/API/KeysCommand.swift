import ArgumentParser
import Foundation
import RichPushCore
import RichPushStorage

/// `richpush keys create|list|revoke`: API keys for server-to-server senders.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage API keys (Authorization: Bearer rpk_…), stored as SHA-256 digests.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key for a user; prints its id and the token, which is shown only this once.",
            discussion: """
                Scopes: send (POST /api/notifications), read (notifications, status, list, receipts), listen (the user's device registrations only: \
                what an app ships in its client), admin (every route the user may call), manage (the app's credentials at /api/apps/<its app>; \
                an admin user's key only, never implied by admin). With --app, the key is that app's: its token is rpk_<app>.<id>_<secret>.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @Argument(help: "The user the key acts as.") var user: String
        @Option(help: "Comma-separated scopes: send, read, listen, admin, manage.") var scope = "send"
        @Option(help: "A label to recognise the key by.") var label = ""

        func validate() throws {
            if let problem = User.validate(name: user) { throw ValidationError(problem) }
            _ = try scopes()
            guard label.utf8.count <= 200 else { throw ValidationError("--label is at most 200 bytes") }
        }

        func scopes() throws -> Set<APIKey.Scope> {
            let parts = scope.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let scopes = try parts.map { part in
                guard let scope = APIKey.Scope(rawValue: part) else {
                    throw ValidationError(
                        "unknown scope '\(part)'; known: \(APIKey.Scope.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return scope
            }
            guard !scopes.isEmpty else { throw ValidationError("give at least one scope") }
            return Set(scopes)
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-keys")
            let scopes = try scopes()
            if scopes.contains(.manage),
                try await RedisUserStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection)).user(
                    named: user)?.user.role != .admin
            {
                await connection.close()
                throw CLIError("the manage scope is for an admin's key (the app's credentials); \(user) is not an admin")
            }
            let created = try await RedisAPIKeyStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .create(user: user, scopes: scopes, label: label)
            await connection.close()
            guard let (key, token) = created else { throw CLIError("no user \(user)") }
            print("id \(key.id) user \(key.user) scopes \(key.scopes.sorted().map(\.rawValue).joined(separator: ","))")
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (never their tokens).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @Argument(help: "Only this user's keys.") var user: String?

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-keys")
            let keys = try await RedisAPIKeyStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .list(user: user)
            await connection.close()
            for key in keys {
                let created = Date(timeIntervalSince1970: Double(key.createdAt) / 1000).formatted(.iso8601)
                print("\(key.id)\t\(key.user)\t\(key.scopes.sorted().map(\.rawValue).joined(separator: ","))\t\(created)\t\(key.label)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key; every API replica stops accepting it at once.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var app: AppOption
        @Argument(help: "The key's id (16 hex digits).") var id: String

        func validate() throws {
            guard id.utf8.count == 16, id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw ValidationError("a key id is 16 lowercase hex digits (see `richpush keys list`)")
            }
        }

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-keys")
            let revoked = try await RedisAPIKeyStore(redis: connection, keys: try await app.keys(queue.storageKeys(redis), on: connection))
                .revoke(id: id)
            await connection.close()
            guard revoked else { throw CLIError("no key \(id)") }
            print("revoked \(id)")
        }
    }
}
