/// What a rich notification carries, as the seed's `RichType` string: the device app decides what
/// to do with the payload by it (`img` shows an image; the tutorial says to add url, sound, ...).
public struct RichType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let image = RichType(rawValue: "img")
    public static let url = RichType(rawValue: "url")
    public static let sound = RichType(rawValue: "sound")
    public static let text = RichType(rawValue: "text")

    /// The types the API accepts, in the order error messages list them.
    public static let known: [RichType] = [.image, .url, .sound, .text]

    public var isKnown: Bool { Self.known.contains(self) }
    public var description: String { rawValue }
}
