import Foundation
import RedisTestSupport
import Testing

/// README.md and docs/*.md name `richpush` commands a reader will type: each must be a real
/// subcommand with real flags, as the built CLI's `--help` says (ComposeFileTests does the same
/// for docker-compose.yml). Flags of other programs (redis-cli, curl, docker, scripts/*.sh) are
/// not read: only what follows `richpush …` on the same command line.
@Suite("richpush commands in README.md and docs/")
struct DocsCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func documents() throws -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        return [root.appendingPathComponent("README.md")] + names.map { docs.appendingPathComponent($0) }
    }

    @Test func everyDocumentedCommandIsRealWithRealFlags() async throws {
        let help = CommandHelp(executable: try richpushExecutable().path)
        var problems: [String] = []
        var checked = 0
        for document in try Self.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            let name = document.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            for command in DocumentedCommand.commands(inMarkdown: text) {
                problems += try await help.problems(command.words).map { "\(name):\(command.line): \($0)" }
                checked += 1
            }
        }
        #expect(problems.isEmpty, "\(problems.count) command(s) the CLI does not have:\n\(problems.joined(separator: "\n"))")
        #expect(checked >= 60, "found only \(checked) richpush commands in README.md and docs/")
    }

    /// The check can fail: a made-up flag or subcommand in a sample document is reported, with
    /// its line, and the real ones and other programs' flags are not.
    @Test func aMadeUpFlagOrSubcommandIsReported() async throws {
        let sample = """
            Start a worker:

            ```sh
            RICHPUSH_PARTITIONS=6 richpush worker --concurrency 4 \\
                --no-such-flag &
            redis-cli --no-auth-warning -p 6399 ping   # `richpush stats --json` says more
            ```

            or `richpush frobnicate --json`, and `richpush users unlock NAME
            [--address A]`, or `richpush …` with any subcommand.
            """
        let help = CommandHelp(executable: try richpushExecutable().path)
        var problems: [String] = []
        for command in DocumentedCommand.commands(inMarkdown: sample) {
            problems += try await help.problems(command.words).map { "\(command.line): \($0)" }
        }
        #expect(problems == ["4: `richpush worker` has no --no-such-flag", "9: `richpush frobnicate` is not a subcommand"])
    }

    /// What counts as a `richpush` command line, read without the CLI.
    @Test func commandsAreFoundInCodeBlocksAndInlineCode() {
        let sample = """
            Run `richpush api --durability replicated [--durability-replicas 1]
            [--durability-timeout-ms 500]` or `richpush users passwd|remove`; `richpush_jobs_total` is a metric.

            ```sh
            $B users add alice   # not resolved: $B is not richpush
            url=$(bash scripts/cluster.sh start | tail -1) && .build/release/richpush stats --redis-url "$url"
            scripts/loadtest.sh --api-option --quota-tags=1 && RICHPUSH_BIN=.build/release/richpush scripts/bench-api.sh
            curl -s -u alice:alice-secret http://127.0.0.1:8080/api/notifications/1/status | richpush report --help
            ```

            ```
            ACL SETUSER richpush on >password ~richpush:* \\
              -@all +ping
            ```
            """
        let commands = DocumentedCommand.commands(inMarkdown: sample).map { "\($0.line): \($0)" }
        #expect(
            commands == [
                "1: richpush api --durability replicated [--durability-replicas 1] [--durability-timeout-ms 500]",
                "2: richpush users passwd",
                "6: richpush stats --redis-url \"$url\"",
                "8: richpush report --help",
            ])
        #expect(
            DocumentedCommand.flags(in: ["replay", "--from=-15m", "[--address", "A]", "--", "--not-a-flag"]) == ["--from", "--address"])
    }

    /// The help reader sees both names of an inverted flag and no flag from a description.
    @Test func helpIsReadFromTheNameColumn() {
        let page = CommandHelp.parse(
            """
            USAGE: richpush worker <options>

            OPTIONS:
              --linger-ms <linger-ms> Milliseconds the next read waits after one that found
                                      fewer jobs (see --drain-timeout).
              --webhooks/--no-webhooks
                                      Deliver webhooks.
              -h, --help              Show help information.

            SUBCOMMANDS:
              list                    List dead letters, newest first.

              See 'richpush help dlq <subcommand>' for detailed help.
            """)
        #expect(page.flags == ["--linger-ms", "--webhooks", "--no-webhooks", "--help"])
        #expect(page.subcommands == ["list"])
    }
}
