/// A Redis Stream entry id `<ms>-<seq>` (or a bare `<ms>`), ordered as Redis orders them.
package struct StreamID: Comparable, Hashable, Sendable, CustomStringConvertible {
    package let milliseconds: UInt64
    package let sequence: UInt64

    package init?(_ text: String) {
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

    package static func < (lhs: StreamID, rhs: StreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    package var description: String { "\(milliseconds)-\(sequence)" }
}
