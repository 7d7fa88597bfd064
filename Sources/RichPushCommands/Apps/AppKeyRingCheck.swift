import Hiredis
import Logging
import RichPushApps

/// The start-up check of `richpush api` and `richpush worker` given a key-encryption key: every
/// stored credential must open with it, else the process stops with a message naming the missing
/// key (not garbage at the first push). Redis not answering yet is not a reason to stop: the
/// check is then left to the first use.
enum AppKeyRingCheck {
    static func atStart(_ store: RedisAppStore, logger: Logger) async throws {
        do {
            let check = try await store.checkKeyRing()
            logger.info("app credentials open with the key-encryption key", metadata: ["sealed": "\(check.sealed)"])
        } catch let error as AppError {
            throw CLIError(error.description)
        } catch let error as RedisError {
            logger.warning("could not check the app credentials at start: Redis did not answer", metadata: ["error": "\(error.message)"])
        }
    }
}
