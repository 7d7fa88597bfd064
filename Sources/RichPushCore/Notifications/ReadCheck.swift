/// Who may read a notification, as a store's read check decides it in the same step as what it
/// records: the user who created it, or the owner of one of the installations it was addressed to
/// when it was sent (a push for it was claimed; a tag added later grants nothing).
///
/// The store answers the same way, after the same work, for a notification that does not exist
/// and for one the reader may not read, so neither the answer nor its timing tells them apart.
package struct ReadCheck: Sendable, Hashable {
    /// The reader's user name: readable if they created it. Nil: only `addressees` decide.
    package var creator: String?
    /// Installations of the reader: readable if it was addressed to one of them.
    package var addressees: [String]

    package init(creator: String?, addressees: [String]) {
        self.creator = creator
        self.addressees = addressees
    }

    /// Readable by `user`: as its creator, or through one of `installations`.
    package static func user(_ user: String, installations: [String]) -> ReadCheck {
        ReadCheck(creator: user, addressees: installations)
    }

    /// Readable through `installation` alone (a device's signed media URL).
    package static func installation(_ installation: String) -> ReadCheck {
        ReadCheck(creator: nil, addressees: [installation])
    }
}
