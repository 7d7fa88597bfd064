import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOSSL
import RichPushApps
import RichPushFCM
import RichPushHTTP2
import RichPushWorker

/// `richpush worker` options for Android devices (platform `fcm`) through FCM HTTP v1.
struct FCMOptions: ParsableArguments {
    @Option(
        help:
            "Send to devices of platform fcm through FCM with this service-account JSON (Firebase console → Project settings → Service accounts; env RICHPUSH_FCM_CREDENTIALS)."
    )
    var fcmCredentials: String?
    @Option(help: "FCM's base URL, or a local fcm-sim's (env RICHPUSH_FCM_URL).") var fcmURL: String?
    @Option(help: "PEM file of the CA to trust instead of the system's, for FCM and the token endpoint (a local fcm-sim's ca.pem).")
    var fcmCAFile: String?
    @Option(help: "Seconds one request to FCM (or its token endpoint) may take.") var fcmTimeout: Double = 10
    @Option(help: "HTTP/2 connections to FCM per worker (each carries as many streams as FCM allows).") var fcmConnections = 2

    /// The FCM route's settings (for `--adapter fcm`), or a message naming what is missing or wrong:
    /// the service account of `--fcm-credentials` when given, else `stored` (the default app's).
    func settings(stored: FCMCredential? = nil) throws -> RichPushWorkerConfiguration.FCMSettings {
        let environment = ProcessInfo.processInfo.environment
        let account: FCMServiceAccount
        if let file = fcmCredentials ?? environment["RICHPUSH_FCM_CREDENTIALS"] {
            account = try Self.account(file: file)
        } else if let stored, let storedAccount = stored.account {
            account = storedAccount
        } else {
            throw CLIError(
                "--adapter fcm needs --fcm-credentials FILE (the service-account JSON) or RICHPUSH_FCM_CREDENTIALS, "
                    + "or the default app's FCM credentials with --kek-file (docs/apps.md)")
        }
        let baseURL = fcmURL ?? environment["RICHPUSH_FCM_URL"] ?? "https://fcm.googleapis.com"
        let endpoint: HTTP2Client.Endpoint
        do {
            endpoint = try HTTP2Client.Endpoint(url: baseURL)
        } catch {
            throw CLIError("--fcm-url must be https://host[:port] (FCM speaks HTTP/2 over TLS only): \(error)")
        }
        guard fcmTimeout > 0 else { throw CLIError("--fcm-timeout must be positive") }
        guard (1...64).contains(fcmConnections) else { throw CLIError("--fcm-connections must be 1 to 64") }
        var http = HTTPClient.Configuration()
        var trustRoots: [NIOSSLCertificate]?
        if let file = fcmCAFile {
            do {
                trustRoots = try NIOSSLCertificate.fromPEMFile(file)
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(trustRoots ?? [])
            http.tlsConfiguration = tls
        }
        let timeout = Duration.milliseconds(Int(fcmTimeout * 1000))
        let client: HTTP2Client
        do {
            client = try HTTP2Client(
                configuration: HTTP2Client.Configuration(
                    endpoint: endpoint, trustRoots: trustRoots, connections: fcmConnections,
                    requestTimeout: timeout))
        } catch {
            throw CLIError("cannot set up TLS for FCM: \(error)")
        }
        return RichPushWorkerConfiguration.FCMSettings(
            client: client, http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: http),
            account: account, timeout: timeout)
    }

    private static func account(file: String) throws -> FCMServiceAccount {
        let json: Data
        do {
            json = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw CLIError("cannot read the FCM service-account file \(file)")
        }
        do {
            return try FCMServiceAccount(json: Array(json))
        } catch {
            throw CLIError("\(file): \(error)")
        }
    }
}
