package import RichPushCore

/// What went wrong with an app or its credentials. Messages name the field and the problem and
/// never carry a secret (a key's text, a service account's private key).
package enum AppError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A field the caller gave is not acceptable.
    case invalid(field: String, String)
    /// No app with this id.
    case notFound(AppID)
    /// An app with this id exists already (or it is `default`, which always does).
    case exists(AppID)
    /// The default app cannot be removed.
    case cannotRemoveDefault
    /// Stored credentials are sealed under a key-encryption key this process was not given.
    case unknownKeyEncryptionKey(id: String)
    /// Stored credentials could not be opened: wrong key, or the stored text was altered.
    case unreadable(app: AppID, field: String)
    /// Credentials are to be sealed or opened but no key-encryption key was given.
    case noKeyEncryptionKey

    package var description: String {
        switch self {
        case let .invalid(field, problem): "\(field): \(problem)"
        case let .notFound(id): "no app '\(id)'"
        case let .exists(id): "the app '\(id)' exists already"
        case .cannotRemoveDefault: "the default app cannot be removed"
        case let .unknownKeyEncryptionKey(id):
            "credentials in Redis are sealed under key-encryption key \(id), which this process was not given "
                + "(give it with --kek-file, or as --previous-kek-file while rotating; see docs/apps.md)"
        case let .unreadable(app, field):
            "the \(field) credentials of app '\(app)' do not open with their key-encryption key (a wrong key, or the stored value was altered)"
        case .noKeyEncryptionKey:
            "app credentials are sealed with a key-encryption key: give one with --kek-file or RICHPUSH_KEK_FILE (`richpush apps new-kek` makes one)"
        }
    }
}
