import RichPushCore
import RichPushWebPush

extension DeviceSimulator {
    /// A web device's new subscription (the push service ended the old one) registered under the
    /// same installation, as a service worker's `pushsubscriptionchange` handler sends it to the
    /// app's server. Throws (and the fleet tries again) while the API does not take it.
    func reregister(_ old: WebDevice, as new: WebDevice) async throws {
        guard let (index, installation) = devices.withLock({ $0[old.endpoint] }) else { return }
        guard
            try await api.reregister(
                installation: installation, platform: .webpush, tags: webTags.withLock { $0[index] ?? [] },
                subscription: new.subscriptionJSON)
        else {
            throw SimulatorError("registration \(installation) is gone: the new subscription cannot replace its endpoint")
        }
        keptSubscriptions.keep(new, installation: installation)
        try keptSubscriptions.save()
        devices.withLock { devices in
            devices[old.endpoint] = nil
            devices[new.endpoint] = (index, installation)
        }
        emit(
            SimulatorEvent(
                event: "resubscribed", device: index, installation: installation,
                detail: "the push service ended the subscription; registered a new one"))
    }

    /// A message from a web device's push service, as its service worker's `push` event gets it:
    /// decrypted with the device's own keys (RFC 8291), its JSON `{"richId", "richMessage",
    /// "richType"}` read, then the app's behaviour as on a phone. The worker shows the
    /// notification with `tag` = the richId, so a resend of a notification replaces what is shown.
    func handle(web message: PushServiceFrame.Message, from web: WebDevice) async {
        guard let device = devices.withLock({ $0[web.endpoint] }) else { return }
        func failed(_ detail: String) {
            emit(SimulatorEvent(event: "failed", device: device.index, installation: device.installation, detail: detail))
        }
        guard !message.body.isEmpty else { return failed("a push message without payload: the service worker has no richId to fetch") }
        guard message.contentEncoding == "aes128gcm" else {
            return failed("the push message's content coding is \(message.contentEncoding ?? "none"), not aes128gcm")
        }
        let plaintext: [UInt8]
        do {
            plaintext = try WebPushEncryption.decrypt(message.body, receiverPrivateKey: try web.privateKey, auth: web.auth)
        } catch {
            return failed("cannot decrypt the push message: \(error)")
        }
        guard let json = JSONValue.parse(plaintext), let keys = ReceivedPush.RichKeys(json) else {
            return failed("the decrypted push message is not a JSON object")
        }
        let push = AppPush(
            keys: keys, platform: .webpush, shownAs: keys.richId.map { "tag#\($0)" },
            collapsed: "a notification with tag \(keys.richId ?? "") is already shown: replaced, not shown again",
            sentAt: message.receivedAtMicros)
        await admit(push, IncomingPush(kind: .background, highPriority: true), on: device, handle: web.endpoint)
    }
}
