import ArgumentParser
import Hummingbird
import RichPushCommands

/// `richpush-bench api`: `richpush api` with every option of it, and also `GET /bench/hello`, the
/// ceiling scripts/bench-api.sh compares the real routes against (no authentication, no Redis).
struct BenchAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api", abstract: "richpush api, also serving GET /bench/hello (the ceiling of scripts/bench-api.sh).")

    @OptionGroup var api: APICommand

    func run() async throws {
        try await api.run { router in
            router.get("bench/hello") { _, _ in "Hello, world!" }
        }
    }
}
