/// Why ``DeviceBackOffs/claim(_:owner:now:until:)`` left a device unclaimed.
package enum DeviceClaimRefusal: Sendable, Hashable {
    /// A provider asked to leave the device alone until then (UNIX ms).
    case held(until: Int64)
    /// Another round's request to the device may be in flight; its claim lapses then at the
    /// latest (UNIX ms), and is usually released much sooner.
    case inFlight(until: Int64)
}
