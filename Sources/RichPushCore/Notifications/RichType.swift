/// What a rich notification carries, as the seed's `RichType` string: the device app decides what
/// to do with the payload by it (`img` shows an image; the tutorial says to add url, sound, ...).
package struct RichType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }

    package static let image = RichType(rawValue: "img")
    package static let url = RichType(rawValue: "url")
    package static let sound = RichType(rawValue: "sound")
    package static let text = RichType(rawValue: "text")

    /// The types the API accepts, in the order error messages list them.
    package static let known: [RichType] = [.image, .url, .sound, .text]

    package var isKnown: Bool { Self.known.contains(self) }
    package var description: String { rawValue }
}
