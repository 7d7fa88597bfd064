/// Where Azure Notification Hubs' interface is served (`richpush api --nh-port`): its own
/// listener, HTTPS as NH's (the SDKs turn `sb://host:port/` into `https://host:port/` and keep the
/// port), each hub (app) at the URL's root.
package struct NHListener: Sendable, Hashable {
    package var host: String
    package var port: Int
    /// PEM files of the server's certificate chain and its private key.
    package var certificateFile: String
    package var keyFile: String

    package init(host: String, port: Int, certificateFile: String, keyFile: String) {
        self.host = host
        self.port = port
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
