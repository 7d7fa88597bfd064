/// Media types by rich type, and a look at the payload's first bytes for images.
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
