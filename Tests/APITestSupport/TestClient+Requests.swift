import Foundation
package import HTTPTypes
package import HummingbirdTesting
package import NIOCore

extension TestAPI {
    /// Basic auth for `user` with `password` (by default the test users' "<name>-pw").
    package static func basic(_ user: String, _ password: String? = nil) -> HTTPFields {
        let token = Data("\(user):\(password ?? "\(user)-pw")".utf8).base64EncodedString()
        return [.authorization: "Basic \(token)"]
    }

    package static func json(_ object: [String: Any]) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }

    /// A small PNG-looking payload.
    package static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 200)
}

extension TestResponse {
    /// The body as a JSON object (empty when it is not one).
    package var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    package var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    package var errorMessage: String { (json["error"] as? [String: Any])?["message"] as? String ?? "" }
    package var bytes: [UInt8] { Array(buffer: body) }
}

extension TestClientProtocol {
    /// Registers a device for `user` with extra tags, as the seed's app does; returns its registration id.
    package func register(_ user: String, handle: String, tags: [String] = []) async throws -> String {
        let id = try await execute(uri: "/api/register?handle=\(handle)", method: .post, headers: TestAPI.basic(user)) { response in
            try JSONDecoder().decode(String.self, from: Data(buffer: response.body))
        }
        try await execute(
            uri: "/api/register/\(id)", method: .put, headers: TestAPI.basic(user),
            body: TestAPI.json(["Platform": "apns", "Handle": handle, "Tags": tags])
        ) { response in
            guard response.status == .ok else { throw TestAPIError("register failed: \(response.status) \(String(buffer: response.body))") }
        }
        return id
    }

    /// Sends an image notification as `user`; returns the response.
    package func sendImage(
        _ user: String, message: String = "Look", target: String? = nil, payload: [UInt8] = TestAPI.png
    ) async throws -> TestResponse {
        var object: [String: Any] = ["message": message, "richType": "img", "payload": Data(payload).base64EncodedString()]
        if let target { object["target"] = target }
        return try await execute(
            uri: "/api/notifications", method: .post,
            headers: TestAPI.basic(user) + [.contentType: "application/json"], body: TestAPI.json(object))
    }
}

package func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
    var result = lhs
    result.append(contentsOf: rhs)
    return result
}
