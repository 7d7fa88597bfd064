package import Logging
import RichPushAPI

/// Logs go to stderr, one line each, so stdout stays for the command's own output.
package enum LogSetup {
    package static func bootstrap(level: Logger.Level = .info) {
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
    }
}
