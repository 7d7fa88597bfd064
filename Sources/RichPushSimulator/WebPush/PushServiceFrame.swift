import Foundation
import RichPushCore

/// A frame of the push service's subscriber WebSocket (docs/webpush.md): `hello` once the
/// connection is registered, then one `message` per push message, its body as the application
/// server sent it; `expired` when the subscription ends (a browser's `pushsubscriptionchange`). Read from the documented protocol, not from the service's own types, as a
/// browser would.
enum PushServiceFrame {
    case hello
    case message(Message)
    /// The push service ended the subscription: subscribe again and re-register.
    case expired
    /// A frame that is not one of these: passed over, as a browser passes over what it does not know.
    case other(String)

    struct Message {
        let id: String
        /// The encrypted body (`aes128gcm`), or empty for a push without payload.
        let body: [UInt8]
        let contentEncoding: String?
        /// When the service accepted it: microseconds since 1970.
        let receivedAtMicros: Int?
    }

    init(text: String) {
        guard let frame = JSONValue.parse(Array(text.utf8)), let type = frame["type"]?.string else {
            self = .other("not a JSON frame with a type")
            return
        }
        switch type {
        case "hello":
            self = .hello
        case "expired":
            self = .expired
        case "message":
            guard let message = frame["message"], let id = message["id"]?.string, let body = message["body"]?.string,
                let bytes = Data(base64Encoded: body)
            else {
                self = .other("a message frame without id and base64 body")
                return
            }
            let receivedAt: Int? =
                if case .number(let seconds)? = message["receivedAt"], let value = Double(seconds) {
                    Int((value * 1_000_000).rounded())
                } else {
                    nil
                }
            self = .message(
                Message(id: id, body: Array(bytes), contentEncoding: message["contentEncoding"]?.string, receivedAtMicros: receivedAt))
        default:
            self = .other("frame type '\(type)'")
        }
    }
}
