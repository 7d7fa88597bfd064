import Logging
import RichPushAPI
import Synchronization
import Testing

/// The API's log handler keeps metadata until a line is written; the lines must read exactly as
/// `StreamLogHandler`'s own (which formats the metadata each time a key is set).
@Suite("Deferred metadata log handler")
struct DeferredMetadataLogHandlerTests {
    final class Lines: TextOutputStream, Sendable {
        private let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
        /// The lines without their timestamps (the first word).
        var withoutTimestamps: [Substring] {
            text.withLock { $0 }.split(separator: "\n").map { $0.drop { $0 != " " } }
        }
    }

    static func exercise(_ logger: inout Logger) {
        logger.info("no metadata yet")
        logger[metadataKey: "hb.request.id"] = "f0dd"
        logger[metadataKey: "user"] = "alice"
        logger.debug("below the level: not written")
        logger.warning("redis unavailable", metadata: ["error": "connection lost", "user": "explicit wins"])
        logger[metadataKey: "user"] = nil
        logger.error("after a removal", metadata: ["a": "1"])
        logger[metadataKey: "z"] = .array(["x", "y"])
        logger.info("nested")
    }

    @Test func linesReadAsStreamLogHandlersDo() {
        let plain = Lines()
        let deferred = Lines()
        var reference = Logger(label: "richpush.api") { StreamLogHandler(label: $0, stream: plain, metadataProvider: nil) }
        var logger = Logger(label: "richpush.api") {
            DeferredMetadataLogHandler(StreamLogHandler(label: $0, stream: deferred, metadataProvider: nil))
        }
        Self.exercise(&reference)
        Self.exercise(&logger)
        #expect(deferred.withoutTimestamps.count == 4)
        #expect(deferred.withoutTimestamps == plain.withoutTimestamps)
        #expect(
            deferred.withoutTimestamps[1]
                == " warning richpush.api: error=connection lost hb.request.id=f0dd user=explicit wins [RichPushAPITests] redis unavailable"
        )
        #expect(logger[metadataKey: "hb.request.id"] == "f0dd" && logger[metadataKey: "user"] == nil)
    }
}
