import Foundation
import RichPushCore
import RichPushNH

/// A JSON Patch on an installation (`PATCH /{hub}/installations/{id}`), applied as Notification
/// Hubs applies one to the installation's document (``NHInstallationDocument``): `add`, `remove`
/// and `replace` (a remove, then an add) on `/userId`, `/pushChannel`, `/tags` (an add appends a
/// tag or several; `/tags/{tag}` names a tag by its value, not its index), `/templates/{name}` and
/// a template's `/body`, `/headers` and `/tags`. A value may be JSON or, as NH's SDKs send
/// templates and tag lists, a string holding the JSON. The document that results is checked
/// whole, as a `PUT` of it would be.
struct NHInstallationPatch {
    enum Operation: String {
        case add, remove, replace
    }

    struct Step {
        let operation: Operation
        let path: [String]
        let text: String
        let value: JSONValue?
    }

    /// The most operations one patch may hold.
    static let maxSteps = 64
    static let templateFields: Set<String> = ["body", "headers", "tags"]
    static let paths = "/userId, /pushChannel, /tags, /tags/{tag}, /templates/{name} and /templates/{name}/body, /headers or /tags"

    let steps: [Step]

    init(_ document: JSONValue) throws {
        guard case .array(let items) = document else {
            throw NHError.badRequest("the body must be a JSON Patch: an array of {\"op\", \"path\", \"value\"}")
        }
        guard (1...Self.maxSteps).contains(items.count) else {
            throw NHError.badRequest("a patch holds 1 to \(Self.maxSteps) operations; this one holds \(items.count)")
        }
        steps = try items.enumerated().map { index, item in
            guard case .object(let fields) = item, let name = fields["op"]?.string, let path = fields["path"]?.string else {
                throw NHError.badRequest("operation \(index) must be an object with 'op' (add, remove or replace) and 'path'")
            }
            if let unknown = fields.keys.sorted().first(where: { !["op", "path", "value"].contains($0) }) {
                throw NHError.badRequest("operation \(index): unknown field '\(unknown.prefix(32))'; known: op, path, value")
            }
            guard let operation = Operation(rawValue: name.lowercased()) else {
                throw NHError.badRequest("operation \(index): op '\(name.prefix(32))' is not served; served: add, remove, replace")
            }
            let value = fields["value"] == .null ? nil : fields["value"]
            if operation != .remove && value == nil {
                throw NHError.badRequest("operation \(index) (\(operation.rawValue) \(path.prefix(64))) needs a 'value'")
            }
            return Step(operation: operation, path: try Self.pointer(path), text: String(path.prefix(128)), value: value)
        }
    }

    /// `document` with every operation applied in order; 400 naming the first that cannot be.
    func applied(to document: JSONValue) throws -> JSONValue {
        guard case .object(var members) = document else { throw NHError.badRequest("the installation is not an object") }
        for step in steps { try apply(step, to: &members) }
        return .object(members)
    }

    private func apply(_ step: Step, to members: inout [String: JSONValue]) throws {
        switch (step.path.first, step.path.count) {
        case ("userId", 1), ("pushChannel", 1):
            members[step.path[0]] = step.operation == .remove ? nil : step.value
        case ("tags", 1), ("tags", 2):
            members["tags"] = try tags(members["tags"], step, at: 1)
        case ("templates", 2...):
            guard case .object(var templates) = members["templates"] ?? .object([:]) else {
                throw NHError.badRequest("'templates' is not an object")
            }
            let name = step.path[1]
            if step.path.count == 2 {
                templates[name] = step.operation == .remove ? nil : try Self.object(step.value, step)
            } else {
                guard case .object(var template) = templates[name] else {
                    throw NHError.badRequest(
                        "\(step.operation.rawValue) \(step.text): the installation has no template '\(name.prefix(64))'")
                }
                let field = step.path[2]
                switch (field, step.path.count) {
                case ("body", 3):
                    guard step.operation == .remove || step.value?.string != nil else {
                        throw NHError.badRequest("\(step.text): a body is a string")
                    }
                    template["body"] = step.value
                case ("headers", 3):
                    template["headers"] = step.operation == .remove ? nil : try Self.object(step.value, step)
                case ("tags", 3), ("tags", 4):
                    template["tags"] = try tags(template["tags"], step, at: 3)
                default:
                    throw NHError.badRequest("path \(step.text) is not one NH patches: \(Self.paths)")
                }
                templates[name] = .object(template)
            }
            members["templates"] = templates.isEmpty ? nil : .object(templates)
        default:
            throw NHError.badRequest("path \(step.text) is not one NH patches: \(Self.paths)")
        }
    }

    /// A tag list after `step`: the list itself at `position` (an add appends, a replace sets, a
    /// remove empties it), or one tag named by the segment after it.
    private func tags(_ current: JSONValue?, _ step: Step, at position: Int) throws -> JSONValue? {
        var tags =
            (current.flatMap { value -> [JSONValue]? in
                guard case .array(let items) = value else { return nil }
                return items
            } ?? []).compactMap(\.string)
        if step.path.count > position {
            let tag = step.path[position]
            switch step.operation {
            case .remove: tags.removeAll { $0 == tag }
            case .add: if !tags.contains(tag) { tags.append(tag) }
            case .replace:
                throw NHError.badRequest(
                    "replace \(step.text): replace the list (\(step.path.prefix(position).joined(separator: "/"))), not one tag")
            }
        } else {
            switch step.operation {
            case .remove: tags = []
            case .add: tags += try Self.tagValues(step.value, step).filter { !tags.contains($0) }
            case .replace: tags = try Self.tagValues(step.value, step)
            }
        }
        return tags.isEmpty ? nil : .array(tags.map(JSONValue.string))
    }

    /// One tag (a string), several (an array, or a string holding one).
    private static func tagValues(_ value: JSONValue?, _ step: Step) throws -> [String] {
        var value = value
        if let text = value?.string {
            guard text.hasPrefix("[") else { return [text] }
            value = JSONValue.parse(Array(text.utf8), maxDepth: 2)
        }
        let refusal = NHError.badRequest("\(step.operation.rawValue) \(step.text): the value is a tag or an array of tags")
        guard case .array(let items)? = value else { throw refusal }
        let tags = items.compactMap(\.string)
        guard tags.count == items.count else { throw refusal }
        return tags
    }

    /// An object, or a string holding one (NH's SDKs send a template so).
    private static func object(_ value: JSONValue?, _ step: Step) throws -> JSONValue {
        var value = value
        if let text = value?.string { value = JSONValue.parse(Array(text.utf8), maxDepth: 4) }
        guard let value, case .object = value else {
            throw NHError.badRequest("\(step.operation.rawValue) \(step.text): the value is a JSON object (or a string holding one)")
        }
        return value
    }

    /// A JSON Pointer's segments (RFC 6901: `~1` is `/`, `~0` is `~`).
    private static func pointer(_ path: String) throws -> [String] {
        guard path.hasPrefix("/"), path.utf8.count <= 512 else {
            throw NHError.badRequest("a path is a JSON Pointer such as /tags (at most 512 bytes)")
        }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }
}
