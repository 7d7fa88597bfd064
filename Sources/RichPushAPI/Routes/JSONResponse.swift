import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore

/// Encodes a value as a JSON response (sorted keys, so answers are stable).
enum JSONResponse {
    static func encode(_ value: some Encodable, status: HTTPResponse.Status, headers: HTTPFields = [:]) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return written(try encoder.encode(value), status: status, headers: headers)
    }

    /// A response of JSON already written (by `JSONWriter` on hot paths, keys sorted as above).
    static func written(_ json: some Sequence<UInt8>, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
