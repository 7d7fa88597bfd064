import Crypto
import NIOCore
import RichPushCore

/// The body of `POST /api/notifications/batch`, `{"notifications": [{…}, …]}`: each item holds the
/// fields a single JSON create takes, plus an optional `idempotencyKey` of its own. The body's
/// shape is checked before its tree is built (``JSONShape``: nesting, item and value counts);
/// then each item is read on its own, so a bad item is that item's error, not the batch's.
enum NotificationBatchInput {
    /// One item, read (not yet validated: the route does that, as for a single create).
    struct Item {
        var input: NotificationInput
        /// The item's `idempotencyKey`, with the fingerprint of the item it came with.
        var idempotencyKey: IdempotencyKey?
    }

    /// How deep a batch may nest: its object, the array, the items, and two levels more, for an
    /// item's template `properties` with their locales (`{"title": {"en": …}}`); an item's other
    /// array or object value is that item's `wrong_type` rather than the whole body's error.
    static let maxDepth = 5
    /// Values one item may bring to the body's bound on values: a notification has at most 11
    /// fields, so a full batch holds about 12 values per item.
    static let valuesPerItem = 16
    /// Values the items' `properties` may hold together, over `valuesPerItem` (a batch of template
    /// sends: 1,000 items of 8 properties, or fewer items localized in several languages).
    static let propertyValues = 8192
    static let keyField = "idempotencyKey"

    /// The items of `body`, each read or refused; throws when the body as a whole is refused (not
    /// JSON, too deep, not `{"notifications": [...]}`, no items or more than `maxItems`).
    static func items(_ body: ByteBuffer, maxItems: Int, user: String) throws -> [Result<Item, APIError>] {
        let bytes = Array(buffer: body)
        let shape = JSONShape(bytes, maxDepth: maxDepth)
        guard !shape.isTooDeep else {
            throw APIError.badRequest(
                "the body nests arrays and objects more than \(maxDepth) deep; a batch is {\"notifications\": [{…}, …]} with a notification's fields in each item",
                code: "too_deep")
        }
        // The containers at depth 2 are the `notifications` array (in a body of the right shape).
        guard shape.values.count < 2 || shape.values[1] <= maxItems else {
            throw APIError.unprocessable("more than \(maxItems) notifications; a batch holds 1 to \(maxItems)", code: "too_many_items")
        }
        guard shape.totalValues <= 2 + maxItems * valuesPerItem + propertyValues else {
            throw APIError.tooLarge(
                "the body holds \(shape.totalValues) JSON values; a batch of \(maxItems) notifications holds at most "
                    + "\(2 + maxItems * valuesPerItem + propertyValues) (\(propertyValues) of them for the items' properties)")
        }
        guard let document = JSONValue.parse(bytes, maxDepth: maxDepth) else {
            throw APIError.badRequest("the body is not valid JSON", code: "malformed_json")
        }
        let shapeText = "{\"notifications\": [{…}, …]}"
        guard case .object(let members) = document else {
            throw APIError.badRequest("the body must be a JSON object \(shapeText)", code: "malformed_json")
        }
        if let unknown = members.keys.sorted().first(where: { $0 != "notifications" }) {
            throw APIError.badRequest("unknown field '\(unknown)'; known fields: notifications", code: "unknown_field")
        }
        guard let list = members["notifications"] else { throw APIError.badRequest("the body must be \(shapeText)", code: "missing_field") }
        guard case .array(let elements) = list else {
            throw APIError.badRequest("'notifications' must be an array of 1 to \(maxItems) notification objects", code: "wrong_type")
        }
        guard !elements.isEmpty else {
            throw APIError.unprocessable("'notifications' is empty; a batch holds 1 to \(maxItems)", code: "empty_batch")
        }
        guard elements.count <= maxItems else {
            throw APIError.unprocessable("\(elements.count) notifications; a batch holds 1 to \(maxItems)", code: "too_many_items")
        }
        // Each item's bytes too: its properties are read from them, in the order written.
        let raw = SendProperties.elements(ofArray: "notifications", in: bytes, depth: maxDepth - 2) ?? []
        return elements.enumerated().map { index, element in
            Result { try item(element, raw: index < raw.count ? raw[index] : nil, user: user) }.mapError(Self.apiError)
        }
    }

    private static func item(_ element: JSONValue, raw: [UInt8]?, user: String) throws -> Item {
        guard case .object(var fields) = element else {
            throw APIError.badRequest("an item must be a JSON object with a notification's fields", code: "malformed_json")
        }
        let keyValue = fields.removeValue(forKey: keyField)
        var others = fields
        // `properties` (or `Properties`, as every field may be spelled) is read from the bytes.
        let name = fields.keys.first { $0.prefix(1).lowercased() + $0.dropFirst() == "properties" }
        let properties = name.flatMap { others.removeValue(forKey: $0) }
        var input = try NotificationInput.json(others, alsoKnown: [keyField])
        if let properties, properties != .null {
            guard let raw, let bytes = SendProperties.member(name ?? "properties", of: raw) else {
                throw APIError.badRequest(
                    "'properties' must be a JSON object of names to text or to objects of locales", code: "invalid_properties")
            }
            input.properties = try NotificationInput.parseProperties(bytes)
        }
        switch keyValue {
        case nil, .null?:
            return Item(input: input)
        case .string(let key)?:
            if let problem = IdempotencyKey.problem(with: key) {
                throw APIError.badRequest("'\(keyField)': \(problem)", code: "bad_idempotency_key")
            }
            return Item(input: input, idempotencyKey: IdempotencyKey(user: user, key: key, fingerprint: fingerprint(of: fields)))
        default:
            throw APIError.badRequest("field '\(keyField)' must be a string", code: "wrong_type")
        }
    }

    /// The SHA-256 of the item re-encoded canonically (members sorted by name, strings escaped
    /// as ``JSONWriter`` does, numbers as written), without its `idempotencyKey`: the same item
    /// sent again, however its JSON was spaced or ordered, is the same request. Prefixed so that it
    /// never equals the fingerprint of a single create (media type and raw body).
    static func fingerprint(of fields: [String: JSONValue]) -> String {
        var hasher = SHA256()
        hasher.update(data: Array("batch-item".utf8) + [0])
        hasher.update(data: canonical(.object(fields)))
        return Hex.encode(hasher.finalize())
    }

    static func canonical(_ value: JSONValue) -> [UInt8] {
        switch value {
        case .object(let members):
            var json = JSONWriter()
            json.beginObject()
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                json.key(name)
                json.raw(canonical(member))
            }
            json.endObject()
            return json.bytes
        case .array(let elements):
            return [UInt8(ascii: "[")] + elements.map(canonical).joined(separator: [UInt8(ascii: ",")]) + [UInt8(ascii: "]")]
        case .string(let text):
            var json = JSONWriter(capacity: text.utf8.count + 2)
            json.string(text)
            return json.bytes
        case .number(let text):
            return Array(text.utf8)
        case .bool(let flag):
            return Array((flag ? "true" : "false").utf8)
        case .null:
            return Array("null".utf8)
        }
    }

    private static func apiError(_ error: any Error) -> APIError {
        error as? APIError ?? APIError.badRequest("the item cannot be read", code: "bad_request")
    }
}
