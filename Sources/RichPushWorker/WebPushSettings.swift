package import AsyncHTTPClient
package import RichPushWebPush

/// Where browsers' pushes go and as whom: the HTTP client (the caller's, run and shut down by
/// its `ServiceGroup`; pooled per push service origin) and the app's VAPID signer.
package struct WebPushSettings: Sendable {
    package var http: HTTPClient
    /// When set, pushes go over HTTP/2 on these (one client per origin); else over `http`.
    package var connections: WebPushConnections?
    package var vapid: VAPIDSigner
    /// How long one request to a push service may take.
    package var timeout: Duration

    package init(http: HTTPClient, connections: WebPushConnections? = nil, vapid: VAPIDSigner, timeout: Duration = .seconds(10)) {
        self.http = http
        self.connections = connections
        self.vapid = vapid
        self.timeout = timeout
    }
}
