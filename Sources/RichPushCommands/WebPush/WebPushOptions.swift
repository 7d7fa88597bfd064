import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOSSL
import RichPushApps
import RichPushWebPush
import RichPushWorker

/// `richpush worker --adapter webpush` options: the app's VAPID key and contact (each also from an
/// environment variable; the default app's stored Web Push credentials win, see docs/apps.md),
/// and how the push services are reached.
struct WebPushOptions: ParsableArguments {
    @Option(
        help: "Web Push: the VAPID private key, a PEM P-256 key or its 32-byte scalar in base64url (env RICHPUSH_WEBPUSH_VAPID_KEY_FILE).")
    var webpushVapidKeyFile: String?
    @Option(help: "Web Push: the VAPID contact, mailto:… or https://… (RFC 8292; env RICHPUSH_WEBPUSH_SUBJECT).") var webpushSubject:
        String?
    @Option(help: "PEM file of the CAs to trust instead of the system's, for the push services (a local webpush-sim's ca.pem).")
    var webpushCAFile: String?
    @Option(help: "Seconds one request to a push service may take.") var webpushTimeout: Double = 10
    @Option(help: "Connections per push service origin.") var webpushConnections = 2
    @Option(
        help:
            "http2: HTTP/2, many streams on each connection (what push services speak); http: AsyncHTTPClient, HTTP/1.1 or HTTP/2 as it negotiates, for a service without HTTP/2."
    )
    var webpushTransport = "http2"

    /// The route's settings: the flags' key and contact when given, else the default app's stored
    /// ones; a message naming what is missing or wrong otherwise.
    func settings(stored: WebPushCredential?) throws -> WebPushSettings {
        let environment = ProcessInfo.processInfo.environment
        guard webpushTimeout > 0 else { throw CLIError("--webpush-timeout must be positive") }
        guard (1...256).contains(webpushConnections) else { throw CLIError("--webpush-connections must be 1 to 256") }
        guard ["http2", "http"].contains(webpushTransport) else {
            throw CLIError("--webpush-transport is http2 or http, not '\(webpushTransport)'")
        }
        let vapid: VAPIDSigner
        if let file = webpushVapidKeyFile ?? environment["RICHPUSH_WEBPUSH_VAPID_KEY_FILE"] {
            guard let subject = webpushSubject ?? environment["RICHPUSH_WEBPUSH_SUBJECT"] else {
                throw CLIError(
                    "--webpush-vapid-key-file needs --webpush-subject (mailto:… or https://…; Apple's push service refuses a token without one)"
                )
            }
            let text = try AppCredentialOptions.read(file, flag: "--webpush-vapid-key-file", limit: 4096)
            do {
                // The same forms an app's Web Push key takes, PEM or the raw scalar.
                let credential = try WebPushCredential(privateKey: text.trimmingCharacters(in: .whitespacesAndNewlines), subject: subject)
                vapid = try VAPIDSigner(privateKey: credential.privateKey, subject: subject)
            } catch {
                throw CLIError("--webpush-vapid-key-file \(file): \(error)")
            }
        } else if let stored, !stored.subject.isEmpty {
            do {
                vapid = try VAPIDSigner(privateKey: stored.privateKey, subject: stored.subject)
            } catch {
                throw CLIError("the default app's Web Push credentials: \(error)")
            }
        } else {
            throw CLIError(
                "--adapter webpush needs --webpush-vapid-key-file and --webpush-subject, or the default app's Web Push credentials "
                    + "with a subject and --kek-file (`richpush apps set default --web-push-subject mailto:…`; docs/apps.md)")
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = webpushConnections
        var roots: [NIOSSLCertificate]?
        if let file = webpushCAFile {
            do {
                roots = try NIOSSLCertificate.fromPEMFile(file)
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(roots ?? [])
            configuration.tlsConfiguration = tls
        }
        let timeout = Duration.milliseconds(Int(webpushTimeout * 1000))
        let connections =
            webpushTransport == "http2" ? WebPushConnections(trustRoots: roots, connections: webpushConnections, timeout: timeout) : nil
        return WebPushSettings(
            http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration), connections: connections,
            vapid: vapid, timeout: timeout)
    }
}
