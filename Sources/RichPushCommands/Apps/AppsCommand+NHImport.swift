import ArgumentParser
import Foundation
import RichPushAPI
import RichPushCore
import RichPushNH
import RichPushQueue
import RichPushStorage

/// `richpush apps nh-import`: registrations in Notification Hubs' bulk format (what NH's export
/// job writes, one registration description per line; ``NHRegistrationFile``) into a hub, each
/// under its `RegistrationId`. The whole file is checked first: one bad line and nothing is
/// written.
extension AppsCommand {
    struct NHImport: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nh-import",
            abstract: "Read Notification Hubs registrations, one per line (NH's bulk format), into an app.",
            discussion: """
                Each line is a registration description (AppleRegistrationDescription, FcmV1…, Gcm…, Browser… or a template \
                kind; an Atom entry holding one is taken too), saved as an installation of the hub under its RegistrationId \
                (a new id when it has none): a second import of the same file updates the same installations. The file is \
                read twice: first every line is checked, and any bad line (printed with its number) means nothing is \
                written; then the registrations are saved, --concurrency at a time. Exits non-zero if any is refused \
                (a handle another user's installation holds). See docs/nh.md.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Flag(help: "Check every line and write nothing.") var dryRun = false
        @Option(help: "Registrations saved at once.") var concurrency = 32
        @Argument(help: "The app's id (`default` for the deployment's first app).") var id: String
        @Argument(help: "The file (one registration description per line).") var file: String

        /// Bad lines printed before the check gives up.
        static let maxProblems = 20

        func validate() throws {
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 256") }
        }

        func run() async throws {
            // First pass: every line is read; nothing is written if one is bad.
            var problems: [String] = []
            var count = 0
            try await Self.eachLine(of: file) { number, line in
                switch Result(catching: { () throws(NHError) in try NHRegistrationFile.installation(line: line, updatedAt: 0) }) {
                case .success: count += 1
                case .failure(let error): problems.append("\(file):\(number): \(error.message)")
                }
                return problems.count < Self.maxProblems
            }
            guard problems.isEmpty else {
                throw CLIError((problems + ["nothing imported: fix the lines above and import again"]).joined(separator: "\n"))
            }
            guard !dryRun else {
                print("\(count) registrations read, all valid (--dry-run: nothing written)")
                return
            }
            let connection = try await connect(redis, clientName: "richpush-nh-import")
            defer { Task { await connection.close() } }
            let store = RedisInstallationStore(
                redis: connection, keys: try await AppOption.keys(queue.storageKeys(redis), app: id, on: connection))
            var (created, updated) = (0, 0)
            var refused: [String] = []
            try await withThrowingTaskGroup(of: (Int, RegistrationOutcome).self) { group in
                var inFlight = 0
                func collect() async throws {
                    guard let (number, outcome) = try await group.next() else { return }
                    inFlight -= 1
                    switch outcome {
                    case .created: created += 1
                    case .updated: updated += 1
                    case .ownedByAnotherUser: refused.append("\(file):\(number): the id is another user's installation")
                    case .handleTaken: refused.append("\(file):\(number): another user's installation holds this handle")
                    case .tooManyRegistrations, .tooManyTags: refused.append("\(file):\(number): over a limit")
                    }
                }
                try await Self.eachLine(of: file) { number, line in
                    let installation = try NHRegistrationFile.installation(line: line, updatedAt: JobQueue.nowMilliseconds())
                    if inFlight == concurrency { try await collect() }
                    inFlight += 1
                    group.addTask { (number, try await store.save(installation, limits: RegistrationLimits())) }
                    return true
                }
                while inFlight > 0 { try await collect() }
            }
            print("imported \(created + updated) registrations into app \(id): \(created) new, \(updated) updated")
            guard refused.isEmpty else {
                throw CLIError((refused.prefix(Self.maxProblems) + ["\(refused.count) registrations refused"]).joined(separator: "\n"))
            }
        }

        /// Calls `body` with each line's number and text until it returns false.
        static func eachLine(of path: String, _ body: (Int, String) async throws -> Bool) async throws {
            var lines = try LineFile(path: path, maxLineBytes: NHRegistrationFile.maxLineBytes)
            defer { lines.close() }
            while let line = try await lines.next() {
                let text = String(decoding: line, as: UTF8.self)
                if text.allSatisfy(\.isWhitespace) { continue }
                guard try await body(lines.lineNumber, text) else { return }
            }
        }
    }
}
