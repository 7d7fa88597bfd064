/// A tag expression as Azure Notification Hubs reads it: tags joined by `&&`, `||`, `!` and
/// parentheses, e.g. `username:alice || (sports && !weekend)`. `!` binds tightest, then `&&`.
/// `*` alone is every installation of the app (NH's send without tags).
package indirect enum TagExpression: Sendable, Hashable, CustomStringConvertible {
    case all
    case tag(String)
    case not(TagExpression)
    case and(TagExpression, TagExpression)
    case or(TagExpression, TagExpression)

    /// Whether an installation with these tags is a target.
    package func matches(_ tags: Set<String>) -> Bool {
        switch self {
        case .all: true
        case .tag(let tag): tags.contains(tag)
        case .not(let inner): !inner.matches(tags)
        case .and(let left, let right): left.matches(tags) && right.matches(tags)
        case .or(let left, let right): left.matches(tags) || right.matches(tags)
        }
    }

    /// Every tag the expression names.
    package var tags: Set<String> {
        switch self {
        case .all: []
        case .tag(let tag): [tag]
        case .not(let inner): inner.tags
        case .and(let left, let right), .or(let left, let right): left.tags.union(right.tags)
        }
    }

    /// The tags whose sets together hold every possible target (nil when a `!` at the top level
    /// makes every installation a candidate).
    package var candidateTags: Set<String>? {
        switch self {
        case .tag(let tag):
            return [tag]
        case .all, .not:
            return nil
        case .and(let left, let right):
            // Every target is in both sides' candidates: the smaller known side suffices.
            guard let l = left.candidateTags else { return right.candidateTags }
            guard let r = right.candidateTags else { return l }
            return l.count <= r.count ? l : r
        case .or(let left, let right):
            guard let l = left.candidateTags, let r = right.candidateTags else { return nil }
            return l.union(r)
        }
    }

    package var description: String {
        switch self {
        case .all: Self.everyone
        case .tag(let tag): tag
        case .not(let inner): "!\(inner.parenthesized)"
        case .and(let left, let right): "\(left.parenthesized) && \(right.parenthesized)"
        case .or(let left, let right): "\(left.parenthesized) || \(right.parenthesized)"
        }
    }

    /// The target that is every installation.
    package static let everyone = "*"

    private var parenthesized: String {
        if case .tag = self { return description }
        if case .not = self { return description }
        return "(\(description))"
    }
}
