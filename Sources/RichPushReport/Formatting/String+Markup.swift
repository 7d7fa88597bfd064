extension String {
    /// The text made safe for XML and HTML text and quoted attribute values: `&`, `<`, `>`, `"`
    /// and `'` as entities, and control characters XML 1.0 forbids (even as entities) dropped, so
    /// a consumer named `a<b&c` can neither break nor inject markup.
    package var markupEscaped: String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
