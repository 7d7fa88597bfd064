import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOSSL
import RichPushFCM
import RichPushWorker

/// `richpush worker` options for Android devices (platform `fcm`) through FCM HTTP v1.
struct FCMOptions: ParsableArguments {
    @Option(help: "Send to devices of platform fcm through FCM with this service-account JSON (Firebase console → Project settings → Service accounts; env RICHPUSH_FCM_CREDENTIALS).")
    var fcmCredentials: String?
    @Option(help: "FCM's base URL, or a local fcm-sim's (env RICHPUSH_FCM_URL).") var fcmURL: String?
    @Option(help: "PEM file of the CA to trust instead of the system's, for FCM and the token endpoint (a local fcm-sim's ca.pem).")
    var fcmCAFile: String?
    @Option(help: "Seconds one request to FCM may take.") var fcmTimeout: Double = 10

    /// The FCM route's settings (for `--adapter fcm`), or a message naming what is missing or wrong.
    func settings() throws -> RichPushWorkerConfiguration.FCMSettings {
        let environment = ProcessInfo.processInfo.environment
        guard let file = fcmCredentials ?? environment["RICHPUSH_FCM_CREDENTIALS"] else {
            throw CLIError("--adapter fcm needs --fcm-credentials FILE (the service-account JSON) or RICHPUSH_FCM_CREDENTIALS")
        }
        let baseURL = fcmURL ?? environment["RICHPUSH_FCM_URL"] ?? "https://fcm.googleapis.com"
        guard baseURL.hasPrefix("https://") || baseURL.hasPrefix("http://") else { throw CLIError("--fcm-url must be an http(s) URL") }
        let json: Data
        do {
            json = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw CLIError("cannot read the FCM service-account file \(file)")
        }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: Array(json))
        } catch {
            throw CLIError("\(file): \(error)")
        }
        guard fcmTimeout > 0 else { throw CLIError("--fcm-timeout must be positive") }
        var http = HTTPClient.Configuration()
        if let file = fcmCAFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
            http.tlsConfiguration = tls
        }
        return RichPushWorkerConfiguration.FCMSettings(http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: http), baseURL: baseURL,
                                                       account: account, timeout: .milliseconds(Int(fcmTimeout * 1000)))
    }
}
