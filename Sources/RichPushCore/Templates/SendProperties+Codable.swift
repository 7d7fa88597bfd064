/// Encoded as the text of its JSON object (the order of properties and locales is kept, which a
/// keyed container would not).
extension SendProperties: Codable {
    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try SendProperties.parse(json: Array(text.utf8))
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(decoding: json, as: UTF8.self))
    }
}
