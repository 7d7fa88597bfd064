/// A Redis Stream entry id `<ms>-<seq>` (or a bare `<ms>`), ordered as Redis orders them.
public struct StreamID: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let milliseconds: UInt64
    public let sequence: UInt64

    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1)
        guard let first = parts.first, let ms = UInt64(first) else { return nil }
        milliseconds = ms
        if parts.count == 2 {
            guard let seq = UInt64(parts[1]) else { return nil }
            sequence = seq
        } else {
            sequence = 0
        }
    }

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    public var description: String { "\(milliseconds)-\(sequence)" }
}
