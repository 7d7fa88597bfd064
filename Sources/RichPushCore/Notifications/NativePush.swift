/// A push whose payload the sender wrote for one platform (Notification Hubs' native send): sent
/// as written to the devices of that format alone, with its headers, never rendered.
package struct NativePush: Sendable, Hashable, Codable {
    package var format: PushFormat
    /// The payload as the platform takes it: APNs' JSON, FCM HTTP v1's message without its
    /// target, Web Push's plaintext.
    package var body: String
    /// Request headers the format takes (``TemplateHeaders/allowed(_:)``): `apns-priority`, …
    package var headers: [String: String]

    package init(format: PushFormat, body: String, headers: [String: String] = [:]) {
        self.format = format
        self.body = body
        self.headers = headers
    }

    /// As stored with the notification: `{"body", "format", "headers"}`.
    package var json: [UInt8] {
        var json = JSONWriter(capacity: body.utf8.count + 64)
        json.value(
            .object([
                "format": .string(format.rawValue), "body": .string(body),
                "headers": .object(headers.mapValues(JSONValue.string)),
            ]))
        return json.bytes
    }

    /// What ``json`` wrote; nil for anything else.
    package init?(json: [UInt8]) {
        guard let value = JSONValue.parse(json, maxDepth: 3), let format = value["format"]?.string.flatMap(PushFormat.init(rawValue:)),
            let body = value["body"]?.string, case .object(let members)? = value["headers"]
        else { return nil }
        var headers: [String: String] = [:]
        for (name, member) in members {
            guard let text = member.string else { return nil }
            headers[name] = text
        }
        self.init(format: format, body: body, headers: headers)
    }

    /// The push to one device: `plain` (its format's rich push, giving the request's metadata)
    /// with this payload, an APNs body with `aps.alert` sent as an alert (priority 10) and any
    /// other as a background push (5), then the headers applied; why not, naming the header.
    package func push(over plain: RenderedPush, now: Int64) -> Result<RenderedPush, NativePushError> {
        var push = plain
        push.payload = Array(body.utf8)
        if format == .apns {
            let alert = JSONValue.parse(push.payload)?["aps"]?["alert"] != nil
            push.pushType = alert ? "alert" : "background"
            push.priority = alert ? 10 : 5
        }
        for (name, value) in TemplateHeaders.ordered(headers) {
            if let problem = TemplateHeaders.apply(name, value, to: &push, now: now) { return .failure(NativePushError(message: problem)) }
        }
        if let problem = TemplateHeaders.combinationProblem(push, format: format) { return .failure(NativePushError(message: problem)) }
        return .success(push)
    }
}

/// Why a native push cannot go out as written.
package struct NativePushError: Error, Sendable, Hashable {
    package let message: String
}
