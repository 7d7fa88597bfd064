import HTTPTypes
import Hiredis
package import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import RichPushCore

/// Turns every error into the API's JSON error shape: Hummingbird's own (404 for an unknown
/// route, 413 for a body over the limit), Redis being away (503 with `Retry-After`), and anything
/// unexpected (500, logged, with nothing internal in the answer).
package struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch {
            throw Self.apiError(for: error, logger: context.logger, requestID: context.id)
        }
    }

    /// What an error answers: Hummingbird's own and NIO's as their status (413 for a body over its
    /// limit, 400 for a malformed or broken request), a quota's 429, 503 + `Retry-After` while
    /// Redis is away, else 500 (logged) with nothing internal in it. A batch answers each item's
    /// failure with it too, and the NH listener each refusal that is not NH's own.
    static func apiError(for error: any Error, logger: Logger, requestID: String) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as HTTPError:
            return APIError(
                error.status, code: Self.code(for: error.status), message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case let error as NIOTooManyBytesError:
            return APIError.tooLarge("the request body is over the limit of \(error.maxBytes.map(String.init) ?? "?") bytes")
        case let error as HTTPParserError:
            // A malformed request (bad chunked framing, ...): the client's fault, not ours.
            logger.debug("malformed request", metadata: ["error": "\(error)"])
            return APIError(
                .badRequest, code: "malformed_request", message: "the request is not valid HTTP/1.1 (\(error))",
                headers: [.connection: "close"])
        case let error as IOError:
            // The client reset the connection mid-request.
            logger.debug("client connection failed", metadata: ["error": "\(error)"])
            return APIError(
                .badRequest, code: "connection_closed", message: "the connection failed before the request was complete",
                headers: [.connection: "close"])
        case let error as ChannelError:
            // The client went away mid-request; nobody will read this answer.
            logger.debug("client closed the connection", metadata: ["error": "\(error)"])
            return APIError(
                .badRequest, code: "connection_closed", message: "the connection closed before the request was complete",
                headers: [.connection: "close"])
        case let refusal as QuotaRefusal:
            return APIError.quotaExceeded(refusal)
        case let error as RedisError where error.isTransient:
            logger.warning("redis unavailable", metadata: ["error": "\(error)"])
            return APIError.unavailable("the store is unavailable; retry shortly", retryAfter: 1)
        default:
            logger.error("unexpected error", metadata: ["error": "\(error)"])
            return APIError(.internalServerError, code: "internal", message: "internal error; the request id is \(requestID)")
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status {
        case .notFound: "not_found"
        case .contentTooLarge: "too_large"
        case .methodNotAllowed: "method_not_allowed"
        case .badRequest: "bad_request"
        default: status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_")
        }
    }
}
