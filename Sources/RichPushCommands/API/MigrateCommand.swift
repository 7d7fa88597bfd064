import ArgumentParser
import Hiredis
import RichPushStorage

/// `richpush migrate`: converts the data under the prefix to the schema this build reads (see
/// docs/upgrading.md); the API and the workers refuse to start until it has run.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Convert the data in Redis to the schema this richpush reads (idempotent, resumable).",
        discussion: """
            Run it once after an upgrade, before the new API and workers start (they refuse data of \
            another schema). Safe to run again, or after an interruption: each item is converted by one \
            script, and the version is stored last. --dry-run counts what a run would do and writes nothing.
            """)

    @OptionGroup var redis: RedisOptions
    @OptionGroup var queue: QueueOptions
    @Flag(help: "Count what a run would convert; write nothing.") var dryRun = false

    func run() async throws {
        let backend = try await connect(redis, clientName: "richpush-migrate")
        let outcome: Result<SchemaMigration.Report, any Error>
        do {
            let migration = SchemaMigration(
                redis: backend.client, keys: queue.storageKeys(redis), nodes: try await backend.locator.masters())
            outcome = .success(try await migration.run(dryRun: dryRun))
        } catch {
            outcome = .failure(error)
        }
        await backend.close()
        switch outcome {
        case .success(let report): print(Self.describe(report, prefix: queue.prefix, dryRun: dryRun))
        case .failure(let mismatch as SchemaVersion.Mismatch): throw CLIError(mismatch.description)
        case .failure(let error as RedisError): throw CLIError("migrate stopped (run it again to resume): \(error.message)")
        case .failure(let error): throw error
        }
    }

    static func describe(_ report: SchemaMigration.Report, prefix: String, dryRun: Bool) -> String {
        let current = SchemaVersion.current
        guard let from = report.from else {
            return dryRun
                ? "no data under prefix '\(prefix)': a run would store schema \(current)"
                : "no data under prefix '\(prefix)': stored schema \(current)"
        }
        if from == current { return "the data under prefix '\(prefix)' is schema \(current) already: nothing to do" }
        let nodes = "\(report.nodesScanned) node\(report.nodesScanned == 1 ? "" : "s") scanned"
        if dryRun {
            return "dry run under prefix '\(prefix)', schema \(from) → \(current): would merge \(report.merged) status hashes into their "
                + "records and delete \(report.orphaned) whose record had expired (\(nodes)); nothing written"
        }
        return "schema \(from) → \(current) under prefix '\(prefix)': merged \(report.merged) status hashes into their records, deleted "
            + "\(report.orphaned) whose record had expired (\(nodes))"
    }
}
