package import Foundation

extension SimulatorConfiguration {
    /// The push service web devices subscribe at (`richpush webpush-sim`, or another service that
    /// speaks its subscription protocol, docs/webpush.md), as a browser's `PushManager` does.
    package struct WebPushService: Sendable {
        /// Where `POST /subscribe` goes, e.g. `https://127.0.0.1:8097`.
        package var url: URL
        /// PEM file of the CAs to trust for it (the simulator's `ca.pem`); nil: the system's.
        package var caFile: URL?
        /// The application server's VAPID public key (65 bytes, uncompressed P-256) that the
        /// subscriptions are restricted to (`PushManager.subscribe({applicationServerKey})`); nil
        /// for unrestricted subscriptions.
        package var applicationServerKey: [UInt8]?
        /// First and longest wait before connecting the WebSocket again after it dropped.
        package var reconnectDelay: (first: Duration, max: Duration) = (.milliseconds(100), .seconds(5))

        package init(url: URL, caFile: URL? = nil, applicationServerKey: [UInt8]? = nil) {
            self.url = url
            self.caFile = caFile
            self.applicationServerKey = applicationServerKey
        }
    }
}
