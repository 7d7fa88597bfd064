import Foundation
import HTTPTypes
import Hummingbird
import RichPushNH
import RichPushReport

/// Answers every request on the NH listener with NH's `TrackingId` and `x-ms-correlation-request-id`
/// (the JS SDK reads both), and every refusal as NH does: the status and an XML body
/// `<Error><Code>status</Code><Detail>message</Detail></Error>`; a `Retry-After` of the API's own
/// errors (429, 503) is kept. Errors that are not an `NHError` are answered as the API answers them
/// (``ErrorMiddleware/apiError(for:logger:requestID:)``: 413, 503 while Redis is away, …), in NH's
/// form; anything unexpected is a 500 that says nothing more.
struct NHErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    static let trackingID = HTTPField.Name("TrackingId")!
    static let correlationID = HTTPField.Name("x-ms-correlation-request-id")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let tracking = UUID().uuidString
        do {
            var response = try await next(request, context)
            response.headers[Self.trackingID] = tracking
            response.headers[Self.correlationID] = tracking
            return response
        } catch let error as NHError {
            return Self.answer(status: error.status, detail: "\(error.code): \(error.message)", headers: [:], tracking: tracking)
        } catch {
            // RichPush's own refusals, Hummingbird's and NIO's (413 for a body over its limit),
            // Redis being away (503 with Retry-After), and anything else a 500 that says nothing more.
            let refusal = ErrorMiddleware<Context>.apiError(for: error, logger: context.logger, requestID: tracking)
            // NH answers a request it cannot take (a bad tag expression, a body that is not a
            // template's properties) with 400 where RichPush's own API says 422.
            let status = refusal.status == .unprocessableContent ? 400 : Int(refusal.status.code)
            let detail = refusal.status == .internalServerError ? "internal error" : "\(refusal.code): \(refusal.message)"
            return Self.answer(status: status, detail: detail, headers: refusal.headers, tracking: tracking)
        }
    }

    static func answer(status: Int, detail: String, headers: HTTPFields, tracking: String) -> Response {
        let body = "<Error><Code>\(status)</Code><Detail>\(detail.markupEscaped) TrackingId:\(tracking)</Detail></Error>"
        var fields = headers
        fields[.contentType] = "application/xml; charset=utf-8"
        fields[trackingID] = tracking
        fields[correlationID] = tracking
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
