import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A console bulk action ("all that match": replay or purge dead letters, cancel scheduled sends)
/// and its answer, which shows its progress while it runs (docs/console.md):
/// - a browser (`Accept: text/html`) gets the page written as the action goes: the frame and a
///   heading first, then one line per batch ("Replayed 1,500 of 100,000"), then the result. The
///   page renders as it arrives: no script, the same policy and escaping as every page;
/// - `Accept: application/x-ndjson` gets one JSON object per batch (`{"done":…,"requested":…}`),
///   then the final one, the single answer's object (`action`, `requested`, `done`);
/// - any other client gets that single answer once the action is done, as before.
///
/// **The action finishes whatever the client does.** It runs in a task of its own, started
/// before the answer, so neither the request's task nor the connection reaches it: Hummingbird
/// writes a streamed answer's head before it calls the body, and never calls the body when that
/// write fails; a later write fails when the client has gone. Hummingbird 2.28 cancels no
/// handler when its client disconnects (only the server's own task group is ever cancelled, when
/// the process stops without draining), and an unstructured task inherits no cancellation
/// anyway. The body waits for the task's end even after a write failed, so the connection, and
/// with it the server's graceful shutdown, waits for the action. Its audit entry says `ok` or
/// `failed` with the numbers either way. Once the answer has started its status is gone, so a
/// failure then is the stream's last line (and the audit's `failed`).
///
/// Progress goes from the task to the body through a stream that keeps the newest 256 counts:
/// a client reading slowly makes the page skip lines, never the action wait or memory grow.
struct ConsoleBulkAction: Sendable {
    /// How the client asked to be answered.
    enum Answer: Sendable {
        case single, page, lines

        init(_ request: Request) {
            let accept = request.headers[values: .accept].joined(separator: ",").lowercased()
            self = accept.contains("application/x-ndjson") ? .lines : ConsolePage.wantsHTML(request) ? .page : .single
        }
    }

    /// What the page says: `title` and `heading` while it runs ("Replaying 1,200 dead letters"),
    /// `line(done)` per batch ("Replayed 500 of 1,200"), `result(done)` at the end (the single
    /// answer's page body).
    struct Wording: Sendable {
        let title: String
        let heading: String
        let line: @Sendable (Int) -> HTML
        let result: @Sendable (Int) -> HTML
    }

    /// `replay`, `purge`, `cancel`: the final object's `action`.
    let action: String
    let requested: Int
    let wording: Wording
    let audit: ConsoleAuditTrail

    /// The action's work: given `progress` (the running total done, after each batch), how many it did.
    typealias Work = @Sendable (_ progress: (Int) async -> Void) async throws -> Int

    static let progressBuffer = 256

    /// Runs `work` audited and answers as `answer` asks; the `started` entry is written first,
    /// while a failure can still be the answer's status.
    func respond(_ answer: Answer, session: ConsoleSession, context: APIRequestContext, _ work: @escaping Work) async throws -> Response {
        guard answer != .single else {
            let done = try await audit.run { try await work { _ in } }
            return ConsolePage.json(final(done: done, error: nil))
        }
        try await audit.started()
        let (logger, requestID) = (context.logger, context.id)
        let (updates, sink) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(Self.progressBuffer))
        let run = Task { [audit] () async -> Outcome in
            defer { sink.finish() }
            var reached = 0
            var outcome: Outcome
            do {
                outcome = Outcome(
                    done: try await work { done in
                        reached = done
                        sink.yield(done)
                    }, error: nil)
            } catch {
                outcome = Outcome(done: reached, error: error)
            }
            do {
                try await audit.finished(done: outcome.done, error: outcome.error)
            } catch {
                logger.error(
                    "a console bulk action's end could not be audited",
                    metadata: ["console.action": "\(audit.action)", "error": "\(error)"])
                outcome.error = outcome.error ?? error
            }
            return outcome
        }
        var headers = ConsolePage.securityHeaders
        headers[.contentType] = answer == .page ? "text/html; charset=utf-8" : "application/x-ndjson"
        // A proxy that buffers (nginx) would hold the lines back until the end.
        headers[Self.accelBuffering] = "no"
        let frame = ConsolePage.frame(title: wording.title, session: session)
        let body = ResponseBody { [self] writer in
            var failedWrite: (any Error)?
            func send(_ text: String, _ writer: inout any ResponseBodyWriter) async {
                guard failedWrite == nil else { return }
                do { try await writer.write(ByteBuffer(string: text)) } catch { failedWrite = error }
            }
            if answer == .page {
                await send(frame.opening.text + runningPage.text, &writer)
            }
            for await done in updates {
                await send(answer == .page ? wording.line(done).text + "\n" : Self.line(["done": done, "requested": requested]), &writer)
            }
            let outcome = await run.value
            let apiError = outcome.error.map { ErrorMiddleware<APIRequestContext>.apiError(for: $0, logger: logger, requestID: requestID) }
            if answer == .page {
                await send(endPage(outcome, error: apiError).text + frame.closing.text, &writer)
            } else {
                await send(Self.line(final(done: outcome.done, error: apiError)), &writer)
            }
            // The client went away: close the connection (the action is done).
            if let failedWrite { throw failedWrite }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    struct Outcome: Sendable {
        var done: Int
        var error: (any Error)?
    }

    func final(done: Int, error: APIError?) -> [String: Any] {
        var object: [String: Any] = ["action": action, "requested": requested, "done": done]
        if let error { object["error"] = ["code": error.code, "message": error.message] }
        return object
    }

    private var runningPage: HTML {
        """
        <h1>\(wording.heading)</h1>
        <p>This page shows each batch as it is done. Leaving it does not stop the action: the audit log records its end.</p>
        <ol class="progress" id="progress">

        """
    }

    private func endPage(_ outcome: Outcome, error: APIError?) -> HTML {
        guard let error else { return "</ol>\n\(wording.result(outcome.done))" }
        return """
            </ol>
            <h2>Failed after \(ConsolePage.number(outcome.done)) of \(ConsolePage.number(requested))</h2>
            <p class="error" role="alert">\(error.message)</p>
            <p><code>\(error.code)</code>: what was done stays done; count again to act on the rest.</p>
            """
    }

    /// One line of `application/x-ndjson`.
    static func line(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static let accelBuffering = HTTPField.Name("X-Accel-Buffering")!
}
