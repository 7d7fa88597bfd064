/// `$(prop, n)` and `.(prop, n)`: at most n characters. A character is what Swift's `Character`
/// is, a grapheme cluster, so a clip never splits an emoji, a flag or an accented letter (and
/// never leaves half a UTF-8 sequence in the payload).
enum Clipping {
    /// Where to cut `text` when it has more than `limit` characters, keeping `limit - reserve`
    /// of them (`reserve` 3 leaves room for `...`); nil when it has no more than `limit`.
    static func cut(_ text: String, limit: Int, reserve: Int = 0) -> String.Index? {
        // n characters are at least n bytes: a value that short is never clipped.
        guard text.utf8.count > limit else { return nil }
        if asciiPrefix(text, count: limit + 1) { return text.utf8.index(text.startIndex, offsetBy: limit - reserve) }
        guard let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end != text.endIndex else { return nil }
        return text.index(text.startIndex, offsetBy: limit - reserve)
    }

    /// Whether the first `count` bytes are ASCII other than CR: then each is a character of its
    /// own (no grapheme joins two ASCII characters but CR LF), and a cut anywhere in them falls
    /// between characters, without walking grapheme breaks.
    private static func asciiPrefix(_ text: String, count: Int) -> Bool {
        let scanned = text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.prefix(count).allSatisfy { $0 < 0x80 && $0 != 0x0D }
        }
        return scanned ?? false
    }
}
