/// A `multipart/form-data` body (RFC 7578 on RFC 2046 §5.1) split into parts, over bytes already
/// collected within the body limit. Written here because MultipartKit 4.7.1 traps on an empty
/// boundary and on a header-name byte ≥ 0x80 (an index past its 128-entry table): either was one
/// request that killed the API. Every refusal is a `MultipartFormData.Error`, never a trap.
struct MultipartFormData {
    struct Part {
        /// Header names lowercased; values trimmed.
        var headers: [String: String]
        var body: ArraySlice<UInt8>
    }

    struct Error: Swift.Error, CustomStringConvertible {
        let description: String
    }

    /// Bounds on what one form may hold.
    static let maxParts = 32
    static let maxHeaderBytes = 8 * 1024

    static func parse(_ bytes: [UInt8], boundary: String) throws(Error) -> [Part] {
        let delimiter = Array("--\(boundary)".utf8)
        let next = Array("\r\n--\(boundary)".utf8)
        // The first delimiter opens the body or follows the preamble's CRLF.
        var position: Int
        if bytes.starts(with: delimiter) {
            position = delimiter.count
        } else if let found = find(next, in: bytes[...], from: 0) {
            position = found + next.count
        } else {
            throw Error(description: "no boundary line")
        }
        var parts: [Part] = []
        while true {
            if bytes[position...].starts(with: [0x2D, 0x2D]) { return parts }  // "--": the close delimiter
            while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 }
            guard bytes[position...].starts(with: [0x0D, 0x0A]) else { throw Error(description: "a boundary line must end with CRLF") }
            position += 2
            guard let end = find(next, in: bytes[...], from: position) else {
                throw Error(description: "the body ends inside a part (no closing boundary)")
            }
            guard parts.count < maxParts else { throw Error(description: "more than \(maxParts) parts") }
            parts.append(try part(bytes[position..<end]))
            position = end + next.count
        }
    }

    private static func part(_ bytes: ArraySlice<UInt8>) throws(Error) -> Part {
        let headerEnd: Int
        let bodyStart: Int
        if bytes.starts(with: [0x0D, 0x0A]) {
            (headerEnd, bodyStart) = (bytes.startIndex, bytes.startIndex + 2)
        } else if let blank = find([0x0D, 0x0A, 0x0D, 0x0A], in: bytes, from: bytes.startIndex) {
            (headerEnd, bodyStart) = (blank, blank + 4)
        } else {
            throw Error(description: "a part's headers do not end with a blank line")
        }
        guard headerEnd - bytes.startIndex <= maxHeaderBytes else {
            throw Error(description: "a part's headers exceed \(maxHeaderBytes) bytes")
        }
        var headers: [String: String] = [:]
        var lineStart = bytes.startIndex
        while lineStart < headerEnd {
            let lineEnd = find([0x0D, 0x0A], in: bytes, from: lineStart).map { min($0, headerEnd) } ?? headerEnd
            let line = bytes[lineStart..<lineEnd]
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex, line[..<colon].allSatisfy(isTokenCharacter) else {
                throw Error(description: "a part header is not 'name: value'")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingWhitespace
            headers[name] = value
            lineStart = lineEnd + 2
        }
        return Part(headers: headers, body: bytes[bodyStart...])
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The first index of `needle` in `haystack` at or after `start` (indices of the whole array).
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard let first = needle.first else { return nil }
        let last = haystack.endIndex - needle.count
        var index = max(start, haystack.startIndex)
        while index <= last {
            guard let candidate = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
