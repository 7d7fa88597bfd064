import Crypto
import Foundation
import RichPushCore

/// A `SharedAccessSignature` token, the `Authorization` header of every request to an NH hub:
/// `SharedAccessSignature sr=…&sig=…&se=…&skn=…`, its fields in any order. `sr` is the resource
/// URI, URL-encoded as the client chose to (clients differ in the case of the escapes, so it is
/// kept as sent: the signature covers those bytes); `se` the expiry in seconds since 1970; `skn`
/// the rule's name; `sig` the base64 of HMAC-SHA256 over `sr + "\n" + se`, keyed with the UTF-8
/// text of the rule's key (the base64 key is not decoded first: every NH client signs so).
package struct SharedAccessSignature: Sendable, Hashable {
    /// `sr` as sent.
    package let resource: String
    /// `se` as sent (digits), and its value.
    package let expiryText: String
    package let expiry: Int64
    /// `skn`, decoded.
    package let keyName: String
    /// `sig`, decoded from its URL and base64 forms.
    package let signature: [UInt8]

    /// The longest header read.
    package static let maxHeaderBytes = 4096
    static let scheme = "SharedAccessSignature "

    /// Reads a header's token; a token that is not each of `sr`, `sig`, `se` and `skn` once (and
    /// nothing else) is malformed.
    package init(header: String) throws(NHError) {
        guard header.utf8.count <= Self.maxHeaderBytes else { throw NHError.malformedToken("longer than \(Self.maxHeaderBytes) bytes") }
        guard header.utf8.count > Self.scheme.utf8.count,
            header.utf8.prefix(Self.scheme.utf8.count).elementsEqual(Self.scheme.utf8)
        else { throw NHError.missingToken }
        var fields: [Substring: Substring] = [:]
        for part in header.dropFirst(Self.scheme.count).split(separator: "&", omittingEmptySubsequences: false) {
            guard let equals = part.firstIndex(of: "=") else { throw NHError.malformedToken("'\(part.prefix(20))' is not name=value") }
            let name = part[..<equals]
            guard ["sr", "sig", "se", "skn"].contains(name) else { throw NHError.malformedToken("unknown field '\(name.prefix(20))'") }
            guard fields[name] == nil else { throw NHError.malformedToken("\(name) is given twice") }
            fields[name] = part[part.index(after: equals)...]
        }
        guard let resource = fields["sr"], !resource.isEmpty else { throw NHError.malformedToken("sr is missing") }
        guard let expiryText = fields["se"], (1...12).contains(expiryText.count), expiryText.allSatisfy(\.isASCIIDigit),
            let expiry = Int64(expiryText)
        else { throw NHError.malformedToken("se must be seconds since 1970") }
        guard let keyNameText = fields["skn"], let keyName = PercentEncoding.decode(keyNameText), (1...256).contains(keyName.utf8.count)
        else { throw NHError.malformedToken("skn must name a rule (1 to 256 bytes)") }
        guard let signatureText = fields["sig"], let decoded = PercentEncoding.decode(signatureText),
            let data = Data(base64Encoded: decoded), data.count == SHA256.byteCount
        else { throw NHError.malformedToken("sig must be the base64 of an HMAC-SHA256") }
        self.resource = String(resource)
        self.expiryText = String(expiryText)
        self.expiry = expiry
        self.keyName = keyName
        self.signature = Array(data)
    }

    /// Whether the signature is `key`'s, compared in constant time.
    package func isSigned(with key: String) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(
            signature, authenticating: Array((resource + "\n" + expiryText).utf8), using: SymmetricKey(data: Array(key.utf8)))
    }

    /// Whether the token's resource is the URL of the request (`host`, and `path` from its first
    /// `/`) or a part of it ending at a `/`: the namespace (`https://host/`) or the hub
    /// (`https://host/hub`). Compared without case, as NH does; the default port 443 is implied.
    package func covers(host: String, path: String) -> Bool {
        guard let uri = PercentEncoding.decode(resource[...])?.lowercased() else { return false }
        let rest: Substring
        if uri.hasPrefix("https://") {
            rest = uri.dropFirst(8)
        } else if uri.hasPrefix("sb://") {
            rest = uri.dropFirst(5)
        } else {
            return false
        }
        let authority = rest.prefix { $0 != "/" }
        guard Self.sameAuthority(String(authority), host.lowercased()) else { return false }
        var resourcePath = rest.dropFirst(authority.count)
        while resourcePath.hasSuffix("/") { resourcePath = resourcePath.dropLast() }
        let requestPath = path.lowercased().prefix { $0 != "?" }
        return resourcePath.isEmpty || requestPath == resourcePath || requestPath.hasPrefix(resourcePath + "/")
    }

    private static func sameAuthority(_ a: String, _ b: String) -> Bool {
        func normal(_ authority: String) -> String { authority.hasSuffix(":443") ? String(authority.dropLast(4)) : authority }
        return normal(a) == normal(b)
    }

    /// A token for `resourceURI` (signed with `key`, named `keyName`, until `expiry`), encoded as
    /// the Azure SDKs encode it: the lower-cased URI with upper-case escapes.
    package static func header(resourceURI: String, keyName: String, key: String, expiry: Int64) -> String {
        let resource = PercentEncoding.encode(resourceURI.lowercased())
        let code = HMAC<SHA256>.authenticationCode(
            for: Array((resource + "\n" + String(expiry)).utf8), using: SymmetricKey(data: Array(key.utf8)))
        let signature = PercentEncoding.encode(Data(code).base64EncodedString())
        return scheme + "sr=\(resource)&sig=\(signature)&se=\(expiry)&skn=\(PercentEncoding.encode(keyName))"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
