import RichPushCore

/// The body of a batch direct send (`POST /{hub}/messages/$batch?direct`), as the .NET and JS SDKs
/// write it: `multipart/mixed` with a `notification` part (the native payload, what a single direct
/// send's body is) and a `devices` part (a JSON array of device handles, at most 1,000), each named
/// by its `Content-Disposition: inline; name=…`. Bounded before it is read: the body's size is the
/// route's, at most 8 parts of at most 16 header lines each.
package struct NHBatchDirectSend: Sendable, Equatable {
    /// The native payload, checked by ``NHNativeSend`` as a single send's body is.
    package let notification: [UInt8]
    /// The device handles, each once, in the order given.
    package let handles: [String]

    /// NH's limit on one batch.
    package static let maxHandles = 1000
    /// The longest handle taken (a Web Push endpoint is the longest kind).
    package static let maxHandleBytes = 2048
    static let maxParts = 8
    static let maxHeaderLines = 16

    package init(notification: [UInt8], handles: [String]) {
        self.notification = notification
        self.handles = handles
    }

    /// The batch in `body`, sent with `Content-Type` `contentType`, or NH's 400 naming the problem.
    package static func parse(contentType: String?, body: [UInt8]) throws(NHError) -> NHBatchDirectSend {
        let boundary = try boundary(of: contentType)
        guard String(validating: body, as: UTF8.self) != nil else { throw NHError.badRequest("the batch's body is not UTF-8") }
        // A delimiter starts a line (RFC 2046 §5.1.1); the body's first line may be one. CRLF is
        // the standard line end; a bare LF is taken too. Read as bytes: CRLF is one Character.
        let pieces = split([UInt8(ascii: "\n")] + body, on: Array("\n--\(boundary)".utf8))
        guard pieces.count >= 3, pieces.count <= maxParts + 2, pieces.last?.starts(with: Array("--".utf8)) == true else {
            throw NHError.badRequest(
                "the batch is multipart/mixed with a 'notification' and a 'devices' part, closed by --\(boundary.prefix(70))--")
        }
        var parts: [String: [UInt8]] = [:]
        for piece in pieces.dropFirst().dropLast() {
            // The line break before the next delimiter belongs to it.
            let (name, value) = try part(piece.last == UInt8(ascii: "\r") ? piece.dropLast() : piece)
            guard parts.updateValue(value, forKey: name) == nil else {
                throw NHError.badRequest("the batch has two '\(name)' parts")
            }
        }
        guard let notification = parts["notification"] else { throw NHError.badRequest("the batch has no 'notification' part") }
        guard let devices = parts["devices"] else { throw NHError.badRequest("the batch has no 'devices' part (a JSON array of handles)") }
        guard let given = JSONStringArray.parse(devices) else {
            throw NHError.badRequest("the batch's 'devices' part is a JSON array of device handles (strings)")
        }
        guard (1...maxHandles).contains(given.count) else {
            throw NHError.badRequest("the batch names \(given.count) devices; NH takes 1 to \(maxHandles)")
        }
        var seen = Set<String>()
        var handles: [String] = []
        for handle in given {
            guard (1...maxHandleBytes).contains(handle.utf8.count) else {
                throw NHError.badRequest("a device handle of the batch is \(handle.utf8.count) bytes; 1 to \(maxHandleBytes) are taken")
            }
            if seen.insert(handle).inserted { handles.append(handle) }
        }
        return NHBatchDirectSend(notification: notification, handles: handles)
    }

    /// `bytes` cut at each occurrence of `separator` (which is not kept).
    static func split(_ bytes: [UInt8], on separator: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index + separator.count <= bytes.endIndex {
            if bytes[index] == separator[0] && bytes[index..<index + separator.count].elementsEqual(separator) {
                pieces.append(bytes[start..<index])
                index += separator.count
                start = index
            } else {
                index += 1
            }
        }
        pieces.append(bytes[start...])
        return pieces
    }

    /// `boundary` of a `multipart/mixed` content type, with or without quotes and spaces around
    /// `=` (the SDKs write `boundary = "…"`).
    static func boundary(of contentType: String?) throws(NHError) -> String {
        let fields = (contentType ?? "").split(separator: ";", omittingEmptySubsequences: false)
        guard fields.first?.trimmingWhitespace().lowercased() == "multipart/mixed" else {
            throw NHError.badRequest("a batch direct send's Content-Type is multipart/mixed with a boundary")
        }
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { continue }
            guard field[..<equals].trimmingWhitespace().lowercased() == "boundary" else { continue }
            var value = Substring(field[field.index(after: equals)...].trimmingWhitespace())
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            // RFC 2046: 1 to 70 characters, none of them a line break.
            guard (1...70).contains(value.count), !value.contains(where: \.isNewline) else { break }
            return String(value)
        }
        throw NHError.badRequest("the multipart/mixed Content-Type needs a boundary of 1 to 70 characters")
    }

    /// One part's name (its `Content-Disposition`'s `name`) and content.
    static func part(_ piece: ArraySlice<UInt8>) throws(NHError) -> (name: String, content: [UInt8]) {
        let newline = UInt8(ascii: "\n")
        // The delimiter line's end (transport padding may precede it), then the headers up to an empty line.
        guard let lineEnd = piece.firstIndex(of: newline) else { throw NHError.badRequest("a part of the batch is empty") }
        var rest = piece[(lineEnd + 1)...]
        var name: String?
        var lines = 0
        while true {
            guard let end = rest.firstIndex(of: newline) else {
                throw NHError.badRequest("a part of the batch has no empty line after its headers")
            }
            let bytes = rest[..<end].last == UInt8(ascii: "\r") ? rest[..<end].dropLast() : rest[..<end]
            rest = rest[(end + 1)...]
            if bytes.isEmpty { break }
            lines += 1
            guard lines <= maxHeaderLines else { throw NHError.badRequest("a part of the batch has over \(maxHeaderLines) header lines") }
            let line = String(decoding: bytes, as: UTF8.self)
            guard let colon = line.firstIndex(of: ":") else { throw NHError.badRequest("a part's header line has no ':'") }
            guard line[..<colon].trimmingWhitespace().lowercased() == "content-disposition" else { continue }
            for parameter in line[line.index(after: colon)...].split(separator: ";").dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingWhitespace().lowercased() == "name" else { continue }
                var value = Substring(pair[1].trimmingWhitespace())
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
                name = value.lowercased()
            }
        }
        guard let name, ["notification", "devices"].contains(name) else {
            throw NHError.badRequest("each part of the batch is named (Content-Disposition: inline; name=notification or name=devices)")
        }
        return (name, Array(rest))
    }
}
