import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RichPushQueue
import ServiceLifecycle

/// `GET /console/events`: the overview's numbers as server-sent events, one `overview` event
/// per ``ConsoleConfiguration/liveInterval`` (the parked jobs by app, read slice by slice, once
/// per ``ConsoleConfiguration/parkedEvery`` events). The page's script closes the stream while the tab
/// is hidden and opens it again when shown. A stream ends after
/// ``ConsoleConfiguration/liveStreamEvents`` events, when the session ends (checked every 30 events),
/// when the client goes away (the next write fails), or when the server shuts down; the browser
/// reconnects after `retry`.
/// A read that fails (Redis away) sends an `unavailable` event and the stream goes on.
/// From the second event on, each app's rates are the change of its totals since the previous
/// event's read (``ConsoleOverview/withRates(since:seconds:)``): no extra read, no write.
struct ConsoleLiveStream: Sendable {
    let backend: ConsoleBackend
    let sessions: ConsoleSessions
    let configuration: ConsoleConfiguration
    let slots: LiveStreamSlots

    func response(for session: ConsoleSession, request: Request) throws -> Response {
        guard let slot = slots.take() else {
            throw APIError.unavailable("this server already serves \(slots.limit) live streams; the page keeps its numbers", retryAfter: 5)
        }
        var headers = ConsolePage.securityHeaders
        headers[.contentType] = "text/event-stream; charset=utf-8"
        let body = ResponseBody { [backend, sessions, configuration] writer in
            // Captured, so held as long as the body is: when the server releases it (run to its end,
            // failed, or never run), the slot is free again.
            withExtendedLifetime(slot) {}
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            var sent = 0
            var parked = ParkedJobs()
            // The previous snapshot and when it was read: the rates are the change since then.
            var previous: (overview: ConsoleOverview, at: ContinuousClock.Instant)?
            // The server's graceful shutdown (SIGTERM) ends the stream within one interval, so
            // an open console does not hold `richpush api` for the stream's lifetime.
            while sent < configuration.liveStreamEvents, !Task.isCancelled, !Task.isShuttingDownGracefully {
                let event: String
                do {
                    if sent % configuration.parkedEvery == 0 {
                        parked = try await ParkedJobs.read(backend.queues, limit: configuration.parkedScanLimit)
                    }
                    var overview = try await ConsoleOverview.read(backend.queues, access: session.access, parked: parked)
                    let now = ContinuousClock.now
                    if let previous {
                        overview = overview.withRates(since: previous.overview, seconds: previous.at.duration(to: now) / .seconds(1))
                    }
                    previous = (overview, now)
                    let data = try JSONSerialization.data(withJSONObject: overview.json, options: [.sortedKeys])
                    event = "event: overview\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
                } catch {
                    event = "event: unavailable\ndata: {\"retryAfter\":1}\n\n"
                }
                try await writer.write(ByteBuffer(string: event))
                sent += 1
                if sent == configuration.liveStreamEvents { break }
                if sent % 30 == 0, try await sessions.session(of: request) == nil { break }
                try await Task.sleep(for: configuration.liveInterval)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
