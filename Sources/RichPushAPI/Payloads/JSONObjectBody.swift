import NIOCore
import RichPushCore

/// A small JSON object body: parsed strictly (``JSONValue``: RFC 8259, nesting bounded), with
/// fields outside `allowed` refused by name. Callers bound the body's bytes when they collect it.
enum JSONObjectBody {
    /// `shape` describes the expected object in the error message, e.g. `{"kind", "installation"}`.
    static func members(_ body: ByteBuffer, allowed: [String], shape: String) throws -> [String: JSONValue] {
        guard case .object(let members)? = JSONValue.parse(Array(buffer: body)) else {
            throw APIError.badRequest("the body must be a JSON object \(shape)", code: "malformed_json")
        }
        try refuseUnknown(members.keys, allowed: allowed)
        return members
    }

    private static func refuseUnknown(_ names: some Collection<String>, allowed: [String]) throws {
        if let unknown = names.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.badRequest("unknown field '\(unknown)'; known fields: \(allowed.joined(separator: ", "))", code: "unknown_field")
        }
    }
}
