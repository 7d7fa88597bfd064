package import Logging

/// `StreamLogHandler`, with its metadata formatted only for a line that is written.
///
/// `StreamLogHandler` formats its whole metadata again each time a key is set. The API sets two
/// per request (Hummingbird's `hb.request.id`, then `user`) and writes no line for most
/// requests: that formatting was about 2 % of the API's CPU per request. Here the metadata waits in
/// this handler and goes to the stream handler with the event, where the line reads the same
/// (keys sorted, an event's own metadata winning).
package struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    package var metadata: Logger.Metadata = [:]

    package init(_ stream: StreamLogHandler) {
        self.stream = stream
    }

    package var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        stream.log(event: event)
    }
}
