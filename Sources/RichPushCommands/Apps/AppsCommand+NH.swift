import ArgumentParser
import RichPushApps
import RichPushCore
import RichPushNH

/// `richpush apps nh-rules` and `richpush apps connection-string`: an app's Azure Notification
/// Hubs rules (each a name, two keys and its rights), sealed as credentials are, and the
/// connection strings NH's SDKs are given (docs/nh.md).
extension AppsCommand {
    struct NHRules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nh-rules",
            abstract: "Show or change an app's Notification Hubs rules: names and rights (never a key).",
            discussion: """
                --defaults gives the app NH's two rules if it has none: DefaultListenSharedAccessSignature (Listen, for \
                devices) and DefaultFullSharedAccessSignature (Listen, Manage, Send, for the backend). --rotate makes a new \
                key for one rule (--key primary or secondary): tokens signed with the other key keep working, so a \
                backend moves to the new one without downtime. Changes are seen by the API within seconds.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions
        @Flag(help: "Add NH's two default rules if the app has no rules.") var defaults = false
        @Option(help: "Add a rule of this name, with new keys and --rights.") var add: String?
        @Option(help: "The new rule's rights, comma-separated: Listen, Send, Manage (Manage with both others).") var rights: String?
        @Option(help: "Remove the rule of this name.") var remove: String?
        @Option(help: "Make a new key for the rule of this name (--key).") var rotate: String?
        @Option(help: "Which key --rotate replaces: primary or secondary.") var key: String = "primary"
        @Flag(help: "Remove every rule: the app no longer answers NH's API.") var removeAll = false
        @Argument(help: "The app's id (`default` for the deployment's first app).") var id: String

        func validate() throws {
            let changes = [defaults, add != nil, remove != nil, rotate != nil, removeAll].filter { $0 }.count
            guard changes <= 1 else { throw ValidationError("give one of --defaults, --add, --remove, --rotate, --remove-all") }
            guard (add == nil) == (rights == nil) else { throw ValidationError("--add and --rights go together") }
            guard NHAccessRule.Key(rawValue: key) != nil else { throw ValidationError("--key must be primary or secondary") }
        }

        func run() async throws {
            let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
            let app = try await AppsOutput.withStore(redis, queue, try kek.requiredRing()) { store in
                guard let (_, current) = try await store.nhRules(id: appID) else { throw AppError.notFound(appID) }
                var rules = current
                if defaults {
                    guard rules.isEmpty else {
                        throw CLIError("app '\(appID)' already has NH rules: \(rules.map(\.name).joined(separator: ", "))")
                    }
                    rules = NHAccessRule.defaults()
                } else if let add, let rights {
                    guard !rules.contains(where: { $0.name == add }) else { throw CLIError("app '\(appID)' already has a rule '\(add)'") }
                    rules.append(NHAccessRule.generate(name: add, rights: try Self.parseRights(rights)))
                } else if let remove {
                    guard rules.contains(where: { $0.name == remove }) else { throw CLIError("app '\(appID)' has no rule '\(remove)'") }
                    rules.removeAll { $0.name == remove }
                } else if let rotate {
                    guard let index = rules.firstIndex(where: { $0.name == rotate }) else {
                        throw CLIError("app '\(appID)' has no rule '\(rotate)'")
                    }
                    rules[index] = rules[index].rotating(NHAccessRule.Key(rawValue: key) ?? .primary)
                } else if removeAll {
                    rules = []
                } else {
                    return try await store.summary(id: appID)
                }
                return try await store.update(id: appID, change: AppChange(nhRules: .some(rules.isEmpty ? nil : rules)))
            }
            guard let app else { throw CLIError("no app '\(id)'") }
            if app.nhRules.isEmpty {
                Swift.print("app \(app.id) has no NH rules (richpush apps nh-rules \(app.id) --defaults makes NH's two)")
            }
            for (name, rights) in app.nhRules.sorted(by: { $0.key < $1.key }) {
                Swift.print("\(name)\t\(rights.joined(separator: ","))")
            }
        }

        static func parseRights(_ text: String) throws -> Swift.Set<NHRight> {
            try Swift.Set(
                text.split(separator: ",").map { part in
                    let name = part.trimmingCharacters(in: .whitespaces)
                    guard let right = NHRight.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                        throw CLIError("--rights: '\(name.prefix(20))' is not Listen, Send or Manage")
                    }
                    return right
                })
        }
    }

    struct ConnectionString: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "connection-string",
            abstract: "Print the connection string of one of an app's Notification Hubs rules, for NH's SDKs.",
            discussion: """
                --endpoint is where the SDKs reach the hub: sb://HOST:PORT/ with the host and port of the API's NH \
                listener (the SDKs turn sb:// into https://). The hub's name, for the SDKs, is the app's id. The \
                string holds the rule's key: treat it as a secret.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions
        @Option(help: "The NH endpoint: sb://HOST:PORT/.") var endpoint: String
        @Option(help: "The rule (default: DefaultFullSharedAccessSignature).") var rule = "DefaultFullSharedAccessSignature"
        @Flag(help: "With the rule's secondary key.") var secondary = false
        @Flag(help: "Add EntityPath=<app> (some SDKs take the hub's name from it; notificationhubs-rest-python cannot read it).")
        var entityPath = false
        @Argument(help: "The app's id.") var id: String

        func validate() throws {
            let host = endpoint.hasPrefix("sb://") ? endpoint.dropFirst(5).prefix { $0 != "/" } : ""
            guard !host.isEmpty, !endpoint.contains(";") else { throw ValidationError("--endpoint must be sb://HOST:PORT/") }
        }

        func run() async throws {
            let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
            let rules = try await AppsOutput.withStore(redis, queue, try kek.requiredRing()) { store in
                guard let (_, rules) = try await store.nhRules(id: appID) else { throw AppError.notFound(appID) }
                return rules
            }
            guard let found = rules.first(where: { $0.name == rule }) else {
                throw CLIError(
                    rules.isEmpty
                        ? "app '\(appID)' has no NH rules (richpush apps nh-rules \(appID) --defaults)"
                        : "app '\(appID)' has no rule '\(rule)' (it has \(rules.map(\.name).joined(separator: ", ")))")
            }
            let string = NHConnectionString(
                endpoint: endpoint, keyName: found.name, key: secondary ? found.secondaryKey : found.primaryKey,
                entityPath: entityPath ? appID.rawValue : nil)
            Swift.print(string)
        }
    }
}
