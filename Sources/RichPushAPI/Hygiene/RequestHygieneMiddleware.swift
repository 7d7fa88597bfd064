import HTTPTypes
import Hummingbird

/// Refuses what no route should see: a request without exactly one Host (RFC 9112 §3.2: 400), and
/// a declared body over the limit, answered 413 before a byte of it is read.
struct RequestHygieneMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let maxBodyBytes: Int
    /// Paths whose bodies have a limit of their own (the batch create's).
    var largerBodies: [String: Int] = [:]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, !authority.isEmpty,
            !request.headers.contains(where: { $0.name.canonicalName == "host" })
        else {
            // A second Host stays among the fields once the first became the authority.
            throw APIError.badRequest("an HTTP/1.1 request needs exactly one Host header", code: "bad_host")
        }
        if let declared = request.headers[.contentLength] {
            guard let length = Int(declared), length >= 0 else {
                throw APIError.badRequest("Content-Length is not a non-negative integer", code: "bad_content_length")
            }
            let limit = largerBodies[request.uri.path] ?? maxBodyBytes
            guard length <= limit else {
                throw APIError.tooLarge("the declared body of \(length) bytes is over the limit of \(limit) bytes")
            }
        }
        return try await next(request, context)
    }
}
