import ArgumentParser
import Foundation
import RichPushCore
import RichPushSimulator

/// `richpush device-sim` options for web devices: the push service they subscribe at (a
/// `richpush webpush-sim`) and the application server key their subscriptions are restricted to.
struct DeviceSimWebPushOptions: ParsableArguments {
    @Option(
        help: "Web devices: the push service they subscribe at (POST /subscribe), e.g. https://127.0.0.1:8097 (a richpush webpush-sim).")
    var webpushUrl: String?
    @Option(help: "Web devices: PEM file of the CAs to trust for the push service (webpush-sim's ca.pem) instead of the system's.")
    var webpushCaFile: String?
    @Option(
        help:
            "Web devices: the application server's VAPID public key (base64url, 65 bytes) to restrict the subscriptions to; none: unrestricted."
    )
    var webpushApplicationServerKey: String?

    /// The push service, or nil when no device is a web device.
    func service(needed: Bool) throws -> SimulatorConfiguration.WebPushService? {
        guard needed else { return nil }
        guard let text = webpushUrl, let url = URL(string: text), ["http", "https"].contains(url.scheme), url.host != nil else {
            throw CLIError("--webpush-url must be the push service's URL, such as https://127.0.0.1:8097")
        }
        var key: [UInt8]?
        if let encoded = webpushApplicationServerKey {
            guard let bytes = Base64URL.decode(encoded.trimmingCharacters(in: ["="])), bytes.count == 65, bytes.first == 0x04 else {
                throw CLIError("--webpush-application-server-key must be an uncompressed P-256 public key (65 bytes) in base64url")
            }
            key = Array(bytes)
        }
        return SimulatorConfiguration.WebPushService(
            url: url, caFile: webpushCaFile.map { URL(fileURLWithPath: $0) }, applicationServerKey: key)
    }
}
