import RichPushCore

/// The FCM HTTP v1 request body for one device: the notification's rendering
/// (`PushRenderer.renderFCM`, the v1 `Message` without a target) with the device's
/// registration token added by ``body(token:)``.
package struct FCMMessage: Sendable, Hashable {
    /// Everything in `message` but the token, as a JSON object (`{"android":{…},"data":{…}}`).
    package let rest: [UInt8]

    /// A push's `RenderedPush.payload` from `PushRenderer.renderFCM`; it must be a JSON object.
    package init(rest: [UInt8]) throws(FCMRejection) {
        guard rest.count >= 2, rest.first == UInt8(ascii: "{"), rest.last == UInt8(ascii: "}") else {
            throw FCMRejection(.invalidArgument, "the rendering is not an FCM message object")
        }
        self.rest = rest
    }

    /// `{"message":{"token":…,"android":…,"data":…}}` for one device.
    package func body(token: String) throws(FCMRejection) -> [UInt8] {
        guard PushHandle.isRegistrationToken(token, maxBytes: 4096) else {
            throw FCMRejection(
                .invalidArgument,
                "the registration token must be 1 to 4096 characters of [A-Za-z0-9_:.-], got \(token.utf8.count) characters")
        }
        var json = JSONWriter(capacity: rest.count + token.utf8.count + 32)
        json.beginObject()
        json.key("message")
        json.beginObject()
        json.field("token", token)
        // The members of `rest`, after the token.
        json.raw(Array(rest.dropFirst().dropLast()))
        json.endObject()
        json.endObject()
        return json.bytes
    }
}

/// Why FCM refuses (or would refuse) a message: its error code and our explanation.
package struct FCMRejection: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Sendable, Hashable, RawRepresentable {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package static let invalidArgument = Code(rawValue: "INVALID_ARGUMENT")
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }
}
