import Foundation

/// A filter's text, found in any case: what `range(of:options: .caseInsensitive)` finds, without
/// its cost on the common path. A list page tests up to 50,000 items per partition against
/// several fields each; Foundation's case-insensitive search cost about 2 µs a call here, most of
/// a search that matches nothing. An ASCII needle is looked for in the UTF-8 bytes with ASCII case
/// folded; only a needle or a field with other bytes, not found that way, goes to Foundation (whose
/// Unicode folding can match more there), so what matches is unchanged.
struct CaseInsensitiveText: Sendable {
    let text: String
    private let folded: [UInt8]
    private let isASCII: Bool

    init(_ text: String) {
        self.text = text
        folded = text.utf8.map(Self.fold)
        isASCII = text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// Whether `haystack` holds the text, in any case.
    func found(in haystack: String) -> Bool {
        var haystack = haystack
        return haystack.withUTF8 { found(inUTF8: $0) { String(decoding: $0, as: UTF8.self) } }
    }

    /// Whether these UTF-8 bytes hold the text, in any case.
    func found(inUTF8 bytes: some Collection<UInt8>) -> Bool {
        found(inUTF8: bytes) { String(decoding: $0, as: UTF8.self) }
    }

    private func found<C: Collection<UInt8>>(inUTF8 bytes: C, asString: (C) -> String) -> Bool {
        // Foundation finds no empty text, anywhere.
        guard !folded.isEmpty else { return false }
        if isASCII, Self.search(folded, in: bytes) { return true }
        // Not found byte for byte: only other bytes (non-ASCII) could still match by Unicode's rules.
        guard !isASCII || bytes.contains(where: { $0 >= 0x80 }) else { return false }
        return asString(bytes).range(of: text, options: .caseInsensitive) != nil
    }

    private static func search<C: Collection<UInt8>>(_ needle: [UInt8], in bytes: C) -> Bool {
        guard bytes.count >= needle.count, let first = needle.first else { return false }
        var start = bytes.startIndex
        let lastStart = bytes.index(bytes.endIndex, offsetBy: -needle.count)
        while start <= lastStart {
            if fold(bytes[start]) == first {
                var position = bytes.index(after: start)
                var matched = 1
                while matched < needle.count, fold(bytes[position]) == needle[matched] {
                    matched += 1
                    position = bytes.index(after: position)
                }
                if matched == needle.count { return true }
            }
            start = bytes.index(after: start)
        }
        return false
    }

    /// ASCII upper case to lower case; every other byte as it is.
    private static func fold(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
