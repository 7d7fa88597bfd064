import Foundation
import HTTPTypes
import Hummingbird

/// Encodes a value as a JSON response (sorted keys, so answers are stable).
enum JSONResponse {
    static func encode(_ value: some Encodable, status: HTTPResponse.Status, headers: HTTPFields = [:]) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
