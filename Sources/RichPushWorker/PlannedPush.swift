import RichPushCore

/// One push a delivery batch plans for one of its jobs: the rendered push, its ledger pair and,
/// for a template send, what the device's status entry says of the template.
struct PlannedPush {
    /// The job's place in the batch's work.
    let work: Int
    let push: OutgoingPush
    let key: DeliveryKey
    /// Why this device gets nothing (its template failed): leased and recorded failed, never sent.
    var failure: String? = nil
    /// A template push: the template's name and the locale chosen, for the device's status entry.
    var template: String? = nil
    var locale: String? = nil

    func result(_ counter: DeliveryCounter, adapterID: String? = nil, error: String? = nil) -> DeliveryResult {
        DeliveryResult(
            installation: key.installation, counter: counter, adapterID: adapterID, error: error, template: template, locale: locale)
    }
}
