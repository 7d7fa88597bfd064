package import RichPushCore

/// A native send's body and headers (`ServiceBusNotification-Format: apple`, `fcmv1` or
/// `browser`) checked as the platform will take them and made into the ``NativePush`` RichPush
/// stores: APNs' JSON object with the request's `apns-*` headers; FCM v1's `{"message": {…}}` (or
/// the message alone), whose message (without a target: RichPush adds each device's token) is
/// what is sent; a
/// browser's plaintext. `gcm` is refused: Google retired FCM's first HTTP API in 2024, and NH with it.
package enum NHNativeSend {
    /// The formats served, and each one's push format.
    package static let formats: [String: PushFormat] = ["apple": .apns, "fcmv1": .fcm, "browser": .webpush]
    /// FCM HTTP v1's `Message` fields (its target among them, refused below with a reason).
    static let messageFields: Set<String> = [
        "notification", "data", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition", "name",
    ]

    /// The push for NH format `name` (lower-cased), or NH's 400 naming the problem.
    /// `apnsPayloadProblem` is Apple's rules for an APNs payload of a push type (the APNs adapter's
    /// own check, `APNSPayloadCheck`), nil when it passes: an `apple` body the workers would refuse
    /// push by push after NH's 201 is refused now (the tutorial's `"sound": ""`, docs/nh.md).
    package static func push(
        format name: String, body: [UInt8], headers: [(name: String, value: String)],
        apnsPayloadProblem: (_ payload: [UInt8], _ pushType: String) -> String?
    ) throws(NHError) -> NativePush {
        guard let format = formats[name] else {
            if name == "gcm" {
                throw NHError.badRequest(
                    "ServiceBusNotification-Format gcm (FCM's first HTTP API) is not served: Google closed it in 2024; send fcmv1, whose "
                        + "message reaches gcm and fcmv1 installations alike")
            }
            throw NHError(
                status: 400, code: "UnsupportedFormat",
                message:
                    "ServiceBusNotification-Format '\(name.prefix(32))' is not served; served: template, apple, fcmv1, browser (docs/nh.md)"
            )
        }
        let limit = format.maxTemplateBytes
        guard body.count <= limit else {
            throw NHError.badRequest("the \(name) payload is \(body.count) bytes; \(format.rawValue) takes at most \(limit)")
        }
        guard let text = String(validating: body, as: UTF8.self) else { throw NHError.badRequest("the \(name) payload is not UTF-8") }
        let push: NativePush
        switch format {
        case .apns:
            guard case .object(let members)? = JSONValue.parse(body, maxDepth: 16), case .object? = members["aps"] else {
                throw NHError.badRequest("an apple payload is a JSON object with an 'aps' object, as APNs takes it")
            }
            push = NativePush(format: .apns, body: text, headers: try apnsHeaders(headers))
            // As the worker will apply them: a background body with apns-priority 10 is refused now.
            let plain = RenderedPush(payload: [], pushType: "alert", priority: 10, expiration: 0, collapseID: "x")
            switch push.push(over: plain, now: 0) {
            case .failure(let error): throw NHError.badRequest(error.message)
            case .success(let rendered):
                if let problem = apnsPayloadProblem(rendered.payload, rendered.pushType) { throw NHError.badRequest(problem) }
            }
        case .fcm:
            // FCM HTTP v1's request body, `{"message": {…}}`, or the message alone (as the Node
            // SDK's Python port sends it).
            guard case .object(var message)? = JSONValue.parse(body, maxDepth: 16) else {
                throw NHError.badRequest("an fcmv1 payload is {\"message\": {…}}, FCM HTTP v1's request body, or that message alone")
            }
            if message.count == 1, case .object(let inner)? = message["message"] { message = inner }
            if let unknown = message.keys.sorted().first(where: { !messageFields.contains($0) }) {
                throw NHError.badRequest(
                    "an fcmv1 message has no field '\(unknown.prefix(32))'; FCM v1's are \(messageFields.sorted().joined(separator: ", "))")
            }
            if let target = ["token", "topic", "condition", "name"].first(where: { message[$0] != nil }) {
                throw NHError.badRequest(
                    "an fcmv1 message names no '\(target)': the send's tags choose the devices, and RichPush adds each one's token")
            }
            var json = JSONWriter(capacity: body.count)
            json.value(.object(message))
            push = NativePush(format: .fcm, body: String(decoding: json.bytes, as: UTF8.self))
        case .webpush:
            push = NativePush(format: .webpush, body: text)
        }
        return push
    }

    /// The request's `apns-*` headers RichPush passes to APNs (priority, push type, expiration,
    /// collapse id), checked; another `apns-` header (`apns-topic`: the app's credentials name it)
    /// is refused.
    static func apnsHeaders(_ headers: [(name: String, value: String)]) throws(NHError) -> [String: String] {
        var taken: [String: String] = [:]
        for (name, value) in headers where name.lowercased().hasPrefix("apns-") {
            if let problem = TemplateHeaders.nameProblem(name, format: .apns) { throw NHError.badRequest(problem) }
            guard taken[name.lowercased()] == nil else { throw NHError.badRequest("header '\(name.prefix(64))' is given twice") }
            taken[name.lowercased()] = value
        }
        return taken
    }
}
