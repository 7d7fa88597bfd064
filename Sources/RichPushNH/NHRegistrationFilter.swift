import Foundation

/// A registrations list's `$filter` naming one device, read into the handles to look up: the .NET
/// SDK's `ChannelUri eq '…'` (for every platform), the JS SDK's `DeviceToken eq '…'` (APNs tokens in
/// upper-case hex: both cases are looked up), `GcmRegistrationId eq '…'`, `FcmV1RegistrationId eq
/// '…'` and a browser's `Endpoint eq '…' and P256DH eq '…' and Auth eq '…'` (the endpoint decides).
/// `+` for a space, as a form-encoded query writes it, is read as one.
package enum NHRegistrationFilter {
    package static let fields = ["ChannelUri", "DeviceToken", "GcmRegistrationId", "FcmV1RegistrationId", "Endpoint"]

    package static func handles(_ filter: String) throws(NHError) -> [String] {
        let text = filter.contains(" ") ? filter : filter.replacingPlus()
        guard text.utf8.count <= 4096, let range = text.range(of: " eq '") else {
            throw NHError.badRequest(
                "$filter names a device: ChannelUri eq '…', DeviceToken eq '…', GcmRegistrationId eq '…', FcmV1RegistrationId eq '…' or Endpoint eq '…'"
            )
        }
        let field = text[..<range.lowerBound].drop { $0 == " " }
        guard fields.contains(String(field)) else {
            throw NHError.badRequest("$filter on '\(field.prefix(32))' is not served; served: \(fields.joined(separator: ", "))")
        }
        // The quoted value, OData's '' standing for one quote.
        var value = ""
        var rest = text[range.upperBound...]
        while true {
            guard let quote = rest.firstIndex(of: "'") else { throw NHError.badRequest("$filter's value is not closed with '") }
            value += rest[..<quote]
            rest = rest[rest.index(after: quote)...]
            guard rest.first == "'" else { break }
            value += "'"
            rest = rest.dropFirst()
        }
        guard !value.isEmpty else { throw NHError.badRequest("$filter's value is empty") }
        return field == "DeviceToken" || field == "ChannelUri" ? lookups(for: value) : [value]
    }

    /// The handles to look up for a device handle: an APNs token (hex) in either case (the JS SDK
    /// writes it upper-case; a device registers it as its platform gives it); any other handle
    /// (FCM's, a Web Push endpoint) exactly as given, its case being its own.
    package static func lookups(for handle: String) -> [String] {
        guard !handle.isEmpty, handle.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }) else { return [handle] }
        return Array(Set([handle, handle.lowercased(), handle.uppercased()])).sorted()
    }
}

extension String {
    fileprivate func replacingPlus() -> String { String(map { $0 == "+" ? " " : $0 }) }
}
