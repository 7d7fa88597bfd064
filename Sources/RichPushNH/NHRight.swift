/// What an NH authorization rule lets its key do: `Listen` (a device's registrations and
/// installations), `Send` (sends), `Manage` (everything, the hub's registrations included; NH
/// requires a Manage rule to hold Send and Listen too).
package enum NHRight: String, Sendable, Hashable, Codable, CaseIterable {
    case listen = "Listen"
    case send = "Send"
    case manage = "Manage"
}
