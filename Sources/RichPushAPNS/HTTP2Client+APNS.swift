package import RichPushHTTP2

extension HTTP2Client.Endpoint {
    /// Where APNs is: `production` (api.push.apple.com), `sandbox` (api.sandbox.push.apple.com),
    /// `https://host[:port]`, or `http://host:port` (cleartext HTTP/2 with prior knowledge, for a
    /// local simulator only, and only when the caller allows it: `--apns-cleartext`).
    package init(apns text: String, allowCleartext: Bool = false) throws(APNSConfigurationError) {
        switch text {
        case "production": self.init(host: "api.push.apple.com", port: 443, usesTLS: true)
        case "sandbox", "development": self.init(host: "api.sandbox.push.apple.com", port: 443, usesTLS: true)
        default:
            guard text.hasPrefix("https://") || text.hasPrefix("http://") else {
                throw APNSConfigurationError(
                    "the APNs URL must be production, sandbox, https://host[:port] or http://host:port, not '\(text)'")
            }
            guard allowCleartext || !text.hasPrefix("http://") else {
                throw APNSConfigurationError(
                    "\(text) is cleartext HTTP/2: allow it explicitly (--apns-cleartext), for a local simulator only")
            }
            do {
                try self.init(url: text, allowCleartext: allowCleartext)
            } catch {
                throw APNSConfigurationError("the APNs URL: \(error)")
            }
        }
    }
}

extension HTTP2Client {
    /// Sends APNs requests with the team's provider token (`authorization: bearer <JWT>`).
    package func send(_ requests: [APNSRequest], bearer: String, halt: HTTP2Halt? = nil) async -> [HTTP2Exchange] {
        await send(requests.map(\.http2), authorization: "bearer " + bearer, halt: halt)
    }

    package func send(_ request: APNSRequest, bearer: String) async -> HTTP2Exchange {
        await send([request], bearer: bearer)[0]
    }
}

extension APNSRequest {
    /// As the HTTP/2 client sends it. Apple's advice for its small HPACK table: the device token
    /// (in `:path`) never indexed; `apns-id`, `apns-expiration` and `apns-collapse-id`, new with
    /// every push, indexed only the first time on a connection; the rest indexed.
    var http2: HTTP2Request {
        HTTP2Request(
            path: path,
            headers: headers.map { header in
                let perRequest = header.name == "apns-id" || header.name == "apns-expiration" || header.name == "apns-collapse-id"
                return HTTP2Request.Header(name: header.name, value: header.value, indexing: perRequest ? .firstTimeOnly : .always)
            }, body: body, recipient: path)
    }
}
