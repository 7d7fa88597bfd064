/// Decides whether a request to a hub may go on, as Azure Notification Hubs decides it: a
/// `SharedAccessSignature` token, not expired, signed with the primary or secondary key of one of
/// the hub's rules, for this hub's URL or its namespace's, from a rule with the right the
/// operation needs.
///
/// Nothing tells a caller more than it may learn: an unknown rule name and a wrong key get the
/// same answer after the same work (both keys of a rule are always tried, a dummy rule's for an
/// unknown name), and the signature is compared in constant time.
package enum NHAuthorizer {
    /// The rule that allows the request, or the refusal (401, or 403 for a missing right).
    /// `host` is the request's `Host` header, `path` its path; `now` in seconds since 1970.
    package static func authorize(
        header: String?, host: String, path: String, rules: [NHAccessRule], needs right: NHRight, now: Int64
    ) throws(NHError) -> NHAccessRule {
        guard let header else { throw NHError.missingToken }
        let token = try SharedAccessSignature(header: header)
        guard token.expiry >= now else { throw NHError.expiredToken }
        let rule = rules.first { $0.name == token.keyName }
        let candidate = rule ?? unknownRule
        // Both keys, always: the time does not say which one signed, or whether the name exists.
        let primary = token.isSigned(with: candidate.primaryKey)
        let secondary = token.isSigned(with: candidate.secondaryKey)
        guard let rule, primary || secondary else { throw NHError.invalidSignature }
        guard token.covers(host: host, path: path) else { throw NHError.wrongAudience }
        guard rule.allows(right) else { throw NHError.missingRight(right) }
        return rule
    }

    /// What an unknown rule name is checked against, so it costs what a known one does.
    private static let unknownRule = NHAccessRule(
        name: "", primaryKey: "unknown-rule-primary-key-of-44-characters-xx", secondaryKey: "unknown-rule-secondary-key-of-44-characters",
        rights: [])
}
