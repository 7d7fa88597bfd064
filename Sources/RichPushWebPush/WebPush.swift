/// Web Push (RFC 8030 delivery, RFC 8291 message encryption, RFC 8292 VAPID): what the worker's
/// Web Push adapter, `richpush webpush-sim` and the simulated web devices share.
package enum WebPush {
    /// The largest plaintext one `aes128gcm` record of 4,096 bytes carries (RFC 8291 §4): 4,096
    /// less the 86-byte header, the 16-byte tag and the 1-byte padding delimiter.
    package static let maxPlaintextBytes = 3993
    /// The largest body a push service must accept (RFC 8030 §7.2, RFC 8291 §4); what we send
    /// never exceeds it.
    package static let maxBodyBytes = 4096
    /// The `rs` of the one record we send (RFC 8291 §4).
    package static let recordSize = 4096
    /// salt (16) ‖ rs (4) ‖ idlen (1) ‖ keyid (65): the RFC 8188 header as RFC 8291 fills it.
    package static let headerBytes = 86
    /// An uncompressed P-256 point: 0x04 ‖ x ‖ y.
    package static let publicKeyBytes = 65
    /// The subscription's authentication secret (RFC 8291 §3.2).
    package static let authSecretBytes = 16
    package static let saltBytes = 16
    /// AES-128-GCM's tag.
    package static let tagBytes = 16
}
