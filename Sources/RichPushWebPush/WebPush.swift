/// Web Push (RFC 8030 delivery, RFC 8291 message encryption, RFC 8292 VAPID): what the worker's
/// Web Push adapter, `richpush webpush-sim` and the simulated web devices share.
enum WebPush {
    /// The largest plaintext one `aes128gcm` record of 4,096 bytes carries (RFC 8291 §4): 4,096
    /// less the 86-byte header, the 16-byte tag and the 1-byte padding delimiter.
    static let maxPlaintextBytes = 3993
}
