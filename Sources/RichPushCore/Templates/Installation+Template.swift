extension Installation {
    /// The template this installation gets for a send to `expression`: the first by name whose own
    /// tags, with the installation's, match (one push per device: the delivery ledger counts one
    /// per notification and installation); nil when none does. The worker and the API's dry run
    /// both choose by it.
    package func template(for expression: TagExpression) -> InstallationTemplate? {
        templates.sorted { $0.name < $1.name }.first { template in
            template.tags.isEmpty || expression.matches(Set(tags + template.tags))
        }
    }
}

extension PushFormat {
    /// The most bytes a rendered template may have (APNs' payload, FCM's message, Web Push's
    /// plaintext).
    package var maxTemplateBytes: Int {
        switch self {
        case .apns: PushRenderer.maxPayloadBytes
        case .fcm: PushRenderer.maxFCMDataBytes
        case .webpush: PushRenderer.maxWebPushPlaintextBytes
        }
    }
}
