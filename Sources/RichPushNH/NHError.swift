/// Why the NH surface refused a request: the status Azure Notification Hubs answers with, a code
/// and a message that names the problem and never what a caller may not learn (whether a key name
/// exists, how a signature differs).
package struct NHError: Error, Sendable, Hashable, CustomStringConvertible {
    package let status: Int
    package let code: String
    package let message: String

    package init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    package var description: String { "\(status) \(code): \(message)" }

    /// 400 `BadRequest`: a request NH would refuse as it stands, `message` naming the problem.
    package static func badRequest(_ message: String) -> NHError { NHError(status: 400, code: "BadRequest", message: message) }

    /// No `Authorization` header, or not a `SharedAccessSignature` one.
    package static let missingToken = NHError(
        status: 401, code: "MissingToken", message: "the request needs an Authorization header with a SharedAccessSignature token")
    /// A token that is not `sr`, `sig`, `se` and `skn` once each, or is too long.
    package static func malformedToken(_ problem: String) -> NHError {
        NHError(status: 401, code: "MalformedToken", message: "the SharedAccessSignature token is malformed: \(problem)")
    }
    package static let expiredToken = NHError(
        status: 401, code: "ExpiredToken", message: "the SharedAccessSignature token has expired (se)")
    /// A wrong key or an unknown key name: the same answer for both.
    package static let invalidSignature = NHError(
        status: 401, code: "InvalidSignature", message: "the token's signature does not match a key of this hub's rules")
    package static let wrongAudience = NHError(
        status: 401, code: "InvalidAudience", message: "the token's resource (sr) is neither this hub's URL nor its namespace's")
    package static func missingRight(_ right: NHRight) -> NHError {
        NHError(status: 403, code: "InsufficientClaims", message: "the key's rule lacks the '\(right.rawValue)' right this operation needs")
    }
}
