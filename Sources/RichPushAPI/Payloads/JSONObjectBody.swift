import Foundation
import NIOCore

/// A small JSON object body: parsed, with fields outside `allowed` refused by name.
enum JSONObjectBody {
    /// `shape` describes the expected object in the error message, e.g. `{"kind", "installation"}`.
    static func parse(_ body: ByteBuffer, allowed: [String], shape: String) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] else {
            throw APIError.badRequest("the body must be a JSON object \(shape)", code: "malformed_json")
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.badRequest("unknown field '\(unknown)'; known fields: \(allowed.joined(separator: ", "))", code: "unknown_field")
        }
        return object
    }
}
