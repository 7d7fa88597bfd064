/// An Azure Notification Hubs connection string, as the portal prints one and the SDKs read it:
/// `Endpoint=sb://host[:port]/;SharedAccessKeyName=name;SharedAccessKey=key`, optionally with
/// `EntityPath=hub`. Read as the official SDKs read it: parts split on `;` (empty ones skipped),
/// each at its first `=`, names case-sensitive, in any order.
package struct NHConnectionString: Sendable, Hashable, CustomStringConvertible {
    /// `sb://host[:port]/`, with the trailing `/` (a client that appends the hub's name to it
    /// needs it).
    package var endpoint: String
    package var keyName: String
    package var key: String
    package var entityPath: String?

    /// The longest connection string read.
    package static let maxBytes = 2048

    package init(endpoint: String, keyName: String, key: String, entityPath: String? = nil) {
        self.endpoint = endpoint.hasSuffix("/") ? endpoint : endpoint + "/"
        self.keyName = keyName
        self.key = key
        self.entityPath = entityPath
    }

    package init(parsing text: String) throws(NHError) {
        guard text.utf8.count <= Self.maxBytes else { throw Self.invalid("longer than \(Self.maxBytes) bytes") }
        var fields: [String: String] = [:]
        for part in text.split(separator: ";", omittingEmptySubsequences: true) {
            let trimmed = part.trimmingWhitespace()
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else { throw Self.invalid("'\(trimmed.prefix(40))' is not name=value") }
            let name = String(trimmed[..<equals]).trimmingWhitespace()
            guard fields[name] == nil else { throw Self.invalid("\(name) is given twice") }
            fields[name] = String(trimmed[trimmed.index(after: equals)...]).trimmingWhitespace()
        }
        guard let endpoint = fields["Endpoint"], !endpoint.isEmpty else { throw Self.invalid("Endpoint is missing") }
        let afterScheme = endpoint.hasPrefix("sb://") ? endpoint.dropFirst(5) : endpoint.hasPrefix("https://") ? endpoint.dropFirst(8) : ""
        guard !afterScheme.prefix(while: { $0 != "/" }).isEmpty else {
            throw Self.invalid("Endpoint must be sb://host[:port]/")
        }
        guard let keyName = fields["SharedAccessKeyName"], !keyName.isEmpty else { throw Self.invalid("SharedAccessKeyName is missing") }
        guard let key = fields["SharedAccessKey"], !key.isEmpty else { throw Self.invalid("SharedAccessKey is missing") }
        self.init(endpoint: endpoint, keyName: keyName, key: key, entityPath: fields["EntityPath"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The form the portal prints: Endpoint first and ending in `/`, the key's name before the
    /// key (notificationhubs-rest-python reads them only in this order), no trailing `;`.
    package var description: String {
        var text = "Endpoint=\(endpoint);SharedAccessKeyName=\(keyName);SharedAccessKey=\(key)"
        if let entityPath { text += ";EntityPath=\(entityPath)" }
        return text
    }

    /// The URL the SDKs send to: `sb://` becomes `https://`, the port kept.
    package var httpsEndpoint: String {
        endpoint.hasPrefix("sb://") ? "https://" + endpoint.dropFirst(5) : endpoint
    }

    private static func invalid(_ problem: String) -> NHError {
        NHError(status: 400, code: "InvalidConnectionString", message: "the connection string is not valid: \(problem)")
    }
}
