import Foundation
package import HTTPTypes
package import Hummingbird
import RichPushCore

/// An error the API answers with: a status and `{"error":{"code":"…","message":"…"}}`.
package struct APIError: Error, HTTPResponseError, Sendable {
    package let status: HTTPResponse.Status
    package let code: String
    package let message: String
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let body =
            (try? JSONSerialization.data(withJSONObject: ["error": ["code": code, "message": message]], options: [.sortedKeys])) ?? Data()
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func badRequest(_ message: String, code: String = "bad_request") -> APIError {
        APIError(.badRequest, code: code, message: message)
    }
    static func unprocessable(_ message: String, code: String = "invalid") -> APIError {
        APIError(.unprocessableContent, code: code, message: message)
    }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, code: "not_found", message: message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, code: "forbidden", message: message) }
    static func unauthorized(_ message: String) -> APIError {
        APIError(
            .unauthorized, code: "unauthorized", message: message,
            headers: [.wwwAuthenticate: "Basic realm=\"RichPush\", charset=\"UTF-8\""])
    }
    /// A Bearer token that is not a live API key (RFC 6750 §3).
    static func invalidToken(_ message: String) -> APIError {
        APIError(
            .unauthorized, code: "unauthorized", message: message,
            headers: [.wwwAuthenticate: "Bearer realm=\"RichPush\", error=\"invalid_token\""])
    }
    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, code: "too_large", message: message) }
    static func unsupportedMediaType(_ message: String) -> APIError {
        APIError(.unsupportedMediaType, code: "unsupported_media_type", message: message)
    }
    static func unavailable(_ message: String, retryAfter seconds: Int) -> APIError {
        APIError(.serviceUnavailable, code: "unavailable", message: message, headers: [.retryAfter: "\(seconds)"])
    }
    static func quotaExceeded(_ refusal: QuotaRefusal) -> APIError {
        APIError(.tooManyRequests, code: "quota_exceeded", message: refusal.message, headers: [.retryAfter: "\(refusal.retryAfter)"])
    }
    static func tooManyRequests(_ message: String, retryAfter seconds: Int) -> APIError {
        APIError(.tooManyRequests, code: "too_many_requests", message: message, headers: [.retryAfter: "\(seconds)"])
    }
}
