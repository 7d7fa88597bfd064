import Hiredis
import Logging
import RichPushStorage

/// The check the API and the workers make when they start: the data's schema is the one this
/// build reads (``SchemaVersion``), else they do not start and say to run `richpush migrate`.
enum SchemaCheck {
    /// Redis not answering yet is a warning, as for the other reads at start: the process starts,
    /// and a Redis that answers later holds data this or a later check accepted.
    static func atStart(redis: any RedisClient, keys: StorageKeys, logger: Logger) async throws {
        do {
            try await SchemaVersion.checkAtStart(redis: redis, keys: keys)
        } catch let mismatch as SchemaVersion.Mismatch {
            throw CLIError(mismatch.description)
        } catch let error as RedisError {
            logger.warning("cannot check the data's schema version yet", metadata: ["error": "\(error.message)"])
        }
    }
}
