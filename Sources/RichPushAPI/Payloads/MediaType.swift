/// Media types by rich type, a look at the payload's first bytes for images and audio, and the
/// types a payload may be declared with.
enum MediaType {
    static func infer(for type: String, payload: [UInt8]) -> String {
        switch type {
        case "url": return "text/uri-list"
        case "text": return "text/plain; charset=utf-8"
        case "sound": return sniffAudio(payload) ?? "application/octet-stream"
        default: return sniffImage(payload) ?? "application/octet-stream"
        }
    }

    static func sniffImage(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.count > 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }

    static func sniffAudio(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: Array("ID3".utf8)) || bytes.starts(with: [0xFF, 0xFB]) { return "audio/mpeg" }
        if bytes.count > 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WAVE".utf8) { return "audio/wav" }
        if bytes.count > 8, Array(bytes[4..<8]) == Array("ftyp".utf8) { return "audio/mp4" }
        return nil
    }

    /// A media type is `type/subtype` with optional parameters, nothing that could split a header.
    static func isValid(_ value: String) -> Bool {
        let essence = essence(of: value)
        let parts = essence.split(separator: "/")
        return parts.count == 2 && !value.contains("\r") && !value.contains("\n") && value.count <= 200
    }

    /// The payload types a sender may declare: what a device shows in a notification. Raster
    /// images (not SVG, which can carry script), any audio and video, plain text, `text/uri-list`
    /// (a `url` payload's own type) and JSON; everything else (HTML, SVG, scripts, PDF, ...) is
    /// 415. A declared `application/octet-stream` means "not declared": the type is inferred.
    static let shownImages = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/heic", "image/heif"]
    static let shownTexts = ["text/plain", "text/uri-list", "application/json"]
    static let shown = shownImages + ["audio/*", "video/*"] + shownTexts

    /// Whether `value` (parameters allowed) is one of ``shown``; its subtype must be an RFC 6838
    /// name, so an `audio/...` cannot smuggle anything odd into the Content-Type it is served with.
    static func isShown(_ value: String) -> Bool {
        let essence = essence(of: value).lowercased()
        guard let slash = essence.firstIndex(of: "/") else { return false }
        let type = essence[..<slash], subtype = essence[essence.index(after: slash)...]
        guard (1...127).contains(subtype.utf8.count), subtype.utf8.allSatisfy(isRestrictedNameCharacter) else { return false }
        return type == "audio" || type == "video" || shownImages.contains(essence) || shownTexts.contains(essence)
    }

    /// RFC 6838 §4.2 `restricted-name-chars` (lowercased): letters, digits and `!#$&-^_.+`.
    private static func isRestrictedNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$&-^_.+".utf8.contains(byte)
        }
    }

    /// Whether a browser may show the payload in place: raster images, audio and plain text.
    /// Anything else (HTML, SVG, scripts) is served as an attachment.
    static func isInline(_ value: String) -> Bool {
        let essence = essence(of: value).lowercased()
        if essence == "image/svg+xml" { return false }
        return essence.hasPrefix("image/") || essence.hasPrefix("audio/") || essence == "text/plain" || essence == "text/uri-list"
    }

    /// `type/subtype` without parameters or surrounding blanks (as written, not lowercased).
    static func essence(of value: String) -> Substring {
        let end = value.utf8.firstIndex(of: UInt8(ascii: ";")) ?? value.utf8.endIndex
        return value[..<end].trimmingOptionalWhitespace
    }
}
