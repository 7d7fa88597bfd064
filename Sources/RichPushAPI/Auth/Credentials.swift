import Foundation

/// What an `Authorization` header carries: HTTP Basic (users) or a Bearer API key.
enum Credentials {
    case basic(name: String, password: String)
    case bearer(token: String)

    /// The longest Authorization value read; anything longer is refused unparsed.
    static let maxHeaderBytes = 1024

    init?(header: String?) {
        guard let header, header.utf8.count <= Self.maxHeaderBytes, let space = header.utf8.firstIndex(of: UInt8(ascii: " ")) else {
            return nil
        }
        let scheme = String(Substring(header.utf8[..<space])).lowercased()
        let value = String(header[space...].trimmingOptionalWhitespace)
        switch scheme {
        case "basic":
            guard let data = Data(base64Encoded: value), let decoded = String(data: data, encoding: .utf8),
                let colon = decoded.firstIndex(of: ":")
            else { return nil }
            self = .basic(name: String(decoded[..<colon]), password: String(decoded[decoded.index(after: colon)...]))
        case "bearer":
            guard !value.isEmpty else { return nil }
            self = .bearer(token: value)
        default:
            return nil
        }
    }
}

extension StringProtocol {
    /// The text quoted and escaped (`"a\nb"`), so a value from a request cannot forge a log line.
    var logSafe: String { String(reflecting: self) }
}
