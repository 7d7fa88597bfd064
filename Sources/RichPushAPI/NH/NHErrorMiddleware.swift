import Foundation
import HTTPTypes
import Hummingbird
import RichPushNH
import RichPushReport

/// Answers every request on the NH listener with NH's `TrackingId` and `x-ms-correlation-request-id`
/// (the JS SDK reads both), and every refusal as NH does: the status and an XML body
/// `<Error><Code>status</Code><Detail>message</Detail></Error>`; a `Retry-After` of the API's own
/// errors (429, 503) is kept. What is not an `NHError` or an `APIError` is a 500 that says nothing
/// more.
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
        } catch let error as APIError {
            // NH answers a request it cannot take (a bad tag expression, a body that is not a
            // template's properties) with 400 where RichPush's own API says 422.
            let status = error.status == .unprocessableContent ? 400 : Int(error.status.code)
            return Self.answer(status: status, detail: "\(error.code): \(error.message)", headers: error.headers, tracking: tracking)
        } catch let error as HTTPError {
            return Self.answer(
                status: Int(error.status.code), detail: error.body ?? error.status.reasonPhrase, headers: [:], tracking: tracking)
        } catch {
            context.logger.error("NH request failed", metadata: ["error": "\(error)"])
            return Self.answer(status: 500, detail: "internal error", headers: [:], tracking: tracking)
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
