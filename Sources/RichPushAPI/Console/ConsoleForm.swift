import Foundation
import Hummingbird
import NIOCore
import RichPushCore

/// A console form's fields (`application/x-www-form-urlencoded`), or a page's query: bounded in
/// bytes, in fields and in each value's length, each problem a 4xx naming it.
struct ConsoleForm: Sendable {
    /// Largest form body: 500 selected ids of up to 40 bytes and the filter fit.
    static let maxBytes = 32 * 1024
    /// Most fields (a selection is one `id` field per dead letter).
    static let maxFields = 600
    /// Longest value of any field.
    static let maxValueBytes = 256

    private(set) var fields: [(name: String, value: String)] = []

    init(fields: [(String, String)]) { self.fields = fields }

    /// Parses `name=value&…` (`+` is a space, `%XX` a byte; values must be UTF-8).
    /// `maxValueBytes`: larger for a form that carries a body (the template preview's).
    init(encoded text: Substring, maxBytes: Int = ConsoleForm.maxBytes, maxValueBytes: Int = ConsoleForm.maxValueBytes) throws {
        guard text.utf8.count <= maxBytes else { throw APIError.tooLarge("a console form is at most \(maxBytes) bytes") }
        for pair in text.split(separator: "&") where !pair.isEmpty {
            guard fields.count < Self.maxFields else {
                throw APIError.badRequest("a console form has at most \(Self.maxFields) fields", code: "too_many_fields")
            }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else {
                throw APIError.badRequest("a form field is not valid percent-encoded UTF-8", code: "malformed_form")
            }
            guard name.utf8.count <= 32, value.utf8.count <= maxValueBytes else {
                throw APIError.badRequest("form field '\(name.prefix(32))' is longer than \(maxValueBytes) bytes", code: "field_too_long")
            }
            fields.append((name, value))
        }
    }

    /// The request's form body (its media type checked, at most ``maxBytes`` read).
    static func body(
        of request: Request, maxBytes: Int = ConsoleForm.maxBytes, maxValueBytes: Int = ConsoleForm.maxValueBytes
    ) async throws -> ConsoleForm {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/x-www-form-urlencoded" else {
            throw APIError.unsupportedMediaType("console forms are sent as application/x-www-form-urlencoded")
        }
        var request = request
        let buffer = try await request.collectBody(upTo: maxBytes)
        return try ConsoleForm(encoded: Substring(String(buffer: buffer)), maxBytes: maxBytes, maxValueBytes: maxValueBytes)
    }

    /// A page's query string, with the same bounds.
    static func query(of request: Request) throws -> ConsoleForm {
        try ConsoleForm(encoded: Substring(request.uri.query ?? ""))
    }

    /// The first value of `name`, trimmed; nil when absent or empty.
    subscript(name: String) -> String? {
        guard let value = fields.first(where: { $0.name == name })?.value.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        return value
    }

    /// Every value of `name`.
    func all(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    private static func decode(_ part: Substring) -> String? { PercentEncoding.decode(part, plusIsSpace: true) }
}
