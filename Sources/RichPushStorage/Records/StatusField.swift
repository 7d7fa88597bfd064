/// The fields of a notification's status hash besides its counters (``DeliveryCounter``), spelled
/// once for Swift and, as generated constants, for the scripts.
enum StatusField: String, CaseIterable {
    /// The notification's ``DeliveryState``.
    case state
    /// How many pushes a split fan-out planned.
    case planned
}
