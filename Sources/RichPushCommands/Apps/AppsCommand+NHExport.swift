import ArgumentParser
import Foundation
import NIOPosix
import RichPushAPI
import RichPushCore
import RichPushStorage

/// `richpush apps nh-export`: a hub's registrations in Notification Hubs' bulk format, one
/// registration description per line (``NHRegistrationFile``), which `nh-import` (and NH's own
/// import job) reads.
extension AppsCommand {
    struct NHExport: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "nh-export",
            abstract: "Write an app's installations as Notification Hubs registrations, one per line (NH's bulk format).",
            discussion: """
                Every installation of the app (the hub) becomes a registration description line: AppleRegistrationDescription, \
                FcmV1…, Gcm…, Browser…, or their template kinds. An installation with several templates becomes one template \
                registration per template, as NH keeps them. A registration does not name its user: an installation's \
                username:<id> tag is written, its owner is not. Reads 1,000 installations per two round trips. See docs/nh.md.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var queue: QueueOptions
        @Option(help: "Write here instead of standard output.") var out: String?
        @Argument(help: "The app's id (`default` for the deployment's first app).") var id: String

        func run() async throws {
            let connection = try await connect(redis, clientName: "richpush-nh-export")
            defer { Task { await connection.close() } }
            let keys = try await AppOption.keys(queue.storageKeys(redis), app: id, on: connection)
            let store = RedisInstallationStore(redis: connection, keys: keys)
            let output: FileHandle
            if let out {
                guard FileManager.default.createFile(atPath: out, contents: nil), let handle = FileHandle(forWritingAtPath: out) else {
                    throw CLIError("cannot write \(out)")
                }
                output = handle
            } else {
                output = FileHandle.standardOutput
            }
            var (installations, lines, skipped, cursor) = (0, 0, 0, 0)
            repeat {
                let page = try await store.installationIDs(tag: nil, cursor: cursor, count: 1000)
                cursor = page.next
                var text = ""
                for installation in try await store.installations(ids: page.ids) {
                    installations += 1
                    let written = NHRegistrationFile.lines(installation)
                    if written.isEmpty { skipped += 1 }
                    lines += written.count
                    for line in written { text += line + "\n" }
                }
                // Written on NIO's blocking-I/O pool, as nh-import reads (LineFile).
                let bytes = Data(text.utf8)
                try await NIOThreadPool.singleton.runIfActive { try output.write(contentsOf: bytes) }
            } while cursor != 0
            if out != nil { try output.close() }
            var summary = "exported \(lines) registrations from \(installations) installations of app \(id)"
            if skipped > 0 { summary += "; \(skipped) skipped (a platform NH's registrations do not have)" }
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        }
    }
}
