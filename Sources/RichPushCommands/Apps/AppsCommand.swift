import ArgumentParser
import Foundation
import RichPushApps
import RichPushCore
import RichPushQueue
import RichPushStorage

/// `richpush apps`: the apps one deployment serves, their credentials (sealed at rest) and the
/// key-encryption key's rotation.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Manage apps: their APNs, FCM and Web Push credentials, sealed in Redis with a key-encryption key.",
        discussion: "Credentials are never printed: ids and key fingerprints only. See docs/apps.md.",
        subcommands: [
            Create.self, List.self, Show.self, Set.self, Pause.self, Resume.self, Remove.self, Check.self, Rekey.self, NewKEK.self,
            NHRules.self, ConnectionString.self, NHExport.self, NHImport.self,
        ])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app; it gets a Web Push (VAPID) key pair unless one is given.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions
        @OptionGroup var credentials: AppCredentialOptions
        @OptionGroup var limits: AppLimitOptions
        @OptionGroup var scheduling: AppSchedulingOptions
        @Option(help: "The locale a localized template property falls back to before the first one given (BCP 47: en, fr-CA).")
        var defaultLocale: String?
        @Option(
            help:
                "How its notifications reach the apps when the sender names no delivery: silent, alert or auto (default: the workers' --push-mode)."
        )
        var defaultDelivery: PushRenderer.Mode?
        @Argument(help: "The app's id: 2 to 32 lowercase letters, digits and '-'.") var id: String

        func validate() throws {
            if let problem = AppID.problem(id) { throw ValidationError(problem) }
            if let defaultLocale, LocaleTag(defaultLocale) == nil {
                throw ValidationError("--default-locale '\(defaultLocale)' is not a BCP 47 locale (en, fr-CA)")
            }
        }

        func run() async throws {
            var (set, subject) = try credentials.credentials()
            if set.webPush == nil {
                set.webPush = try AppsOutput.checked { () throws(AppError) in try WebPushCredential.generate(subject: subject ?? "") }
            }
            let app = try await AppsOutput.withStore(redis, queue, kek.requiredRing()) { store in
                let appID = try AppID(id)
                let users = RedisUserStore(redis: store.redis, keys: queue.storageKeys(redis))
                if let problem = try await AppGuards.creationProblem(appID, defaultUsers: users) { throw CLIError(problem) }
                let app = try await store.create(
                    id: appID,
                    change: AppChange(
                        name: credentials.name ?? id, set: set, limits: limits.limits(over: .none),
                        defaultLocale: defaultLocale.map { LocaleTag($0) }, defaultDelivery: defaultDelivery.map { .some($0) },
                        scheduling: scheduling.scheduling(over: AppShare())))
                // Always, so nothing an earlier app of the same id left in the queue stays.
                try await AppSchedulingOptions.apply(app, redis: store.redis, queue: queue, again: Self.setCommand(app))
                return app
            }
            AppsOutput.print(app)
        }

        /// The `apps set` that applies the app's weight and cap again.
        static func setCommand(_ app: AppSummary) -> String {
            "`richpush apps set \(app.id) --weight \(app.scheduling.weight) --max-in-flight \(app.scheduling.maxInFlight.map(String.init) ?? "none")`"
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps: id, version, platforms with credentials, name.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions

        func run() async throws {
            let apps = try await AppsOutput.withStore(redis, queue, nil) { try await $0.list() }
            for app in apps {
                let platforms = app.credentials.keys.sorted().map(\.rawValue).joined(separator: ",")
                Swift.print("\(app.id)\tv\(app.version)\t\(platforms.isEmpty ? "-" : platforms)\t\(app.name)")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one app as JSON (ids and fingerprints, never a secret).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "The app's id.") var id: String

        func run() async throws {
            let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
            guard let app = try await AppsOutput.withStore(redis, queue, nil, { try await $0.summary(id: appID) }) else {
                throw CLIError("no app '\(id)'")
            }
            AppsOutput.print(app)
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Change an app: its name, a platform's credentials (replaced whole), limits, weight and cap; workers use them within seconds.",
            discussion:
                "--weight and --max-in-flight are stored, then written into every queue partition: give the deployment's --partitions.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions
        @OptionGroup var credentials: AppCredentialOptions
        @OptionGroup var limits: AppLimitOptions
        @OptionGroup var scheduling: AppSchedulingOptions
        @Option(help: "Remove a platform's credentials: apns, fcm or webPush (repeatable).") var remove: [String] = []
        @Option(
            help:
                "The locale a localized template property falls back to before the first one given (BCP 47: en, fr-CA); `none` removes it.")
        var defaultLocale: String?
        @Option(help: "How its notifications reach the apps when the sender names no delivery: silent, alert or auto; `none` removes it.")
        var defaultDelivery: String?
        @Argument(help: "The app's id (`default` for the deployment's first app).") var id: String

        func validate() throws {
            if let defaultLocale, defaultLocale != "none", LocaleTag(defaultLocale) == nil {
                throw ValidationError("--default-locale '\(defaultLocale)' is not a BCP 47 locale (en, fr-CA), nor `none`")
            }
            if let defaultDelivery, defaultDelivery != "none", PushRenderer.Mode(rawValue: defaultDelivery) == nil {
                throw ValidationError("--default-delivery '\(defaultDelivery)' is not silent, alert, auto or `none`")
            }
        }

        func run() async throws {
            let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
            let removed = try remove.map { name in
                guard let platform = AppPlatform(rawValue: name) else { throw CLIError("--remove: '\(name)' is not apns, fcm or webPush") }
                return platform
            }
            var (set, subject) = try credentials.credentials()
            // Only credentials are sealed: a change of name, limits or removals needs no key.
            let seals = set.apns != nil || set.fcm != nil || set.webPush != nil || subject != nil
            let app = try await AppsOutput.withStore(redis, queue, seals ? kek.requiredRing() : kek.ring()) { store in
                if let subject, set.webPush == nil {
                    guard let current = try await store.credentials(id: appID) else { throw AppError.notFound(appID) }
                    let pair = current.credentials.webPush
                    set.webPush =
                        try pair.map { try WebPushCredential(privateKey: $0.privateKey, subject: subject) }
                        ?? WebPushCredential.generate(subject: subject)
                }
                var change = AppChange(name: credentials.name, set: set, remove: Swift.Set(removed))
                if let defaultLocale { change.defaultLocale = .some(defaultLocale == "none" ? nil : LocaleTag(defaultLocale)) }
                if let defaultDelivery { change.defaultDelivery = .some(PushRenderer.Mode(rawValue: defaultDelivery)) }
                if limits.limits(over: .none) != nil || scheduling.isGiven {
                    guard let current = try await store.summary(id: appID) else { throw AppError.notFound(appID) }
                    change.limits = limits.limits(over: current.limits)
                    if scheduling.isGiven { change.scheduling = scheduling.scheduling(over: current.scheduling) }
                }
                let app = try await store.update(id: appID, change: change)
                // Stored first, then written into the queue: the same command again finishes a failed write.
                if change.scheduling != nil {
                    try await AppSchedulingOptions.apply(app, redis: store.redis, queue: queue, again: "the same command")
                }
                return app
            }
            AppsOutput.print(app)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an app and its credentials (not the default app).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Argument(help: "The app's id.") var id: String

        func run() async throws {
            let appID = try AppsOutput.checked { () throws(AppError) in try AppID(id) }
            let removed = try await AppsOutput.withStore(redis, queue, nil) { store in
                let users = RedisUserStore(redis: store.redis, keys: queue.storageKeys(redis).forApp(appID))
                if !appID.isDefault, let problem = try await AppGuards.removalProblem(appID, users: users) { throw CLIError(problem) }
                guard try await store.summary(id: appID) != nil else { return false }
                // The queue first (its weight, cap and pause): a failure leaves the app, and the
                // same command finishes the job.
                let queues = queue.partitionConfigurations.map { JobQueue(redis: store.redis, configuration: $0) }
                do {
                    try await JobQueue.forget(app: appID.rawValue, in: queues)
                } catch {
                    throw CLIError(
                        "app '\(appID)' was not removed: the queue's \(queues.count) partition(s) could not be told to forget its weight, cap and pause (\(error)); run the same command again"
                    )
                }
                return try await store.remove(id: appID)
            }
            guard removed else { throw CLIError("no app '\(id)'") }
            Swift.print("removed \(id)")
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open every stored credential with the given key-encryption key(s); fails naming a missing key.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions

        func run() async throws {
            let check = try await AppsOutput.withStore(redis, queue, kek.requiredRing()) { try await $0.checkKeyRing() }
            let keys = check.byKey.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            Swift.print("\(check.sealed) credentials open\(keys.isEmpty ? "" : " (sealed under \(keys))")")
        }
    }

    struct Rekey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-seal every credential under the current key-encryption key (give the old one as --previous-kek-file).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @OptionGroup var kek: KeyEncryptionOptions

        func run() async throws {
            let ring = try kek.requiredRing()
            let count = try await AppsOutput.withStore(redis, queue, ring) { try await $0.rekey() }
            Swift.print("re-sealed \(count) credentials under key \(ring.current.id)")
        }
    }

    struct NewKEK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-kek", abstract: "Print a new random key-encryption key (store it as a file readable only by RichPush).")

        func run() async throws {
            Swift.print(KeyEncryptionKey.generate().text)
        }
    }
}
