/// `$(prop, n)` and `.(prop, n)`: at most n characters. A character is what Swift's `Character`
/// is, a grapheme cluster, so a clip never splits an emoji, a flag or an accented letter (and
/// never leaves half a UTF-8 sequence in the payload).
enum Clipping {
    /// Where to cut `text` to keep `limit` characters, or nil when it is not longer than that.
    static func cut(_ text: String, keeping limit: Int) -> String.Index? {
        // n characters are at least n bytes: a value that short is never clipped.
        guard text.utf8.count > limit else { return nil }
        guard let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end != text.endIndex else { return nil }
        return end
    }

    /// `.(prop, n)`: where to cut `text` so that it and `...` fit in `limit` characters, or nil
    /// when it fits as it is.
    static func cutForEllipsis(_ text: String, limit: Int) -> String.Index? {
        guard cut(text, keeping: limit) != nil else { return nil }
        return text.index(text.startIndex, offsetBy: limit - 3)
    }
}
