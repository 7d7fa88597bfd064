import RichPushCore

/// One push a delivery batch plans for one of its jobs: the rendered push, its ledger pair and,
/// for a template send, what the device's status entry says of the template.
struct PlannedPush {
    /// The job's place in the batch's work.
    let work: Int
    var push: OutgoingPush
    let key: DeliveryKey
    /// Why this device gets nothing (its template failed): leased and recorded failed, never sent.
    var failure: String? = nil
    /// A template push: the template's name and the locale chosen, for the device's status entry.
    var template: String? = nil
    var locale: String? = nil
    /// An `auto` push, still in its silent form until the device's form is chosen: its
    /// notification and format, to render the alert form from.
    var auto: (notification: RichNotification, format: PushFormat)? = nil
    /// An `auto` push: the form chosen and why, for the device's status entry.
    var strategy: String? = nil
    /// A silent `auto` push: the device's estimate once it is sent, stored if it is.
    var spent: DeviceEstimate? = nil

    func result(_ counter: DeliveryCounter, adapterID: String? = nil, error: String? = nil) -> DeliveryResult {
        DeliveryResult(
            installation: key.installation, counter: counter, adapterID: adapterID, error: error, template: template, locale: locale,
            strategy: strategy)
    }
}
