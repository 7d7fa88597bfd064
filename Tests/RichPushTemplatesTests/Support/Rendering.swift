import Foundation
import Testing

@testable import RichPushTemplates

/// Compiles `body` and renders it with `properties`; the payload as text.
func render(_ body: String, _ properties: [String: String] = [:], missing: MissingPropertyPolicy = .fail) throws -> String {
    try Template(body).render(TemplateProperties(properties), missing: missing).text
}

/// The error compiling `body` fails with; records an issue when it compiles.
func compileError(_ body: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> TemplateError? {
    do {
        _ = try Template(body)
        Issue.record("compiled: \(body)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The payload parsed by Foundation, so a test compares values rather than spacing.
func parsed(_ json: String) throws -> NSDictionary {
    try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
}

/// Whether two JSON texts hold the same values.
func sameJSON(_ left: String, _ right: String) throws -> Bool {
    try parsed(left) == parsed(right)
}
