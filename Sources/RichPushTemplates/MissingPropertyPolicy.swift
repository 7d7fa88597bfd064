/// What rendering does when a template refers to a property the send does not carry.
///
/// Notification Hubs writes an empty string (``empty``), which is how an alert goes out
/// blank; RichPush's templates choose ``fail`` or ``fallback(_:)`` instead.
package struct MissingPropertyPolicy: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case fail
        case empty
        case fallback(TemplateProperties)
    }

    let kind: Kind

    /// The render fails with ``TemplateRenderError/Code/missingProperty``.
    package static let fail = MissingPropertyPolicy(kind: .fail)

    /// The property reads as an empty string, as Notification Hubs documents; each one is a
    /// ``TemplateWarning/Code/missingProperty`` warning.
    package static let empty = MissingPropertyPolicy(kind: .empty)

    /// The property is taken from `defaults` (a ``TemplateWarning/Code/defaultUsed`` warning);
    /// a property in neither fails the render.
    package static func fallback(_ defaults: TemplateProperties) -> MissingPropertyPolicy {
        MissingPropertyPolicy(kind: .fallback(defaults))
    }
}
