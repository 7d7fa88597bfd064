import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOSSL
import RichPushAPNS
import RichPushWorker

/// `richpush worker --adapter apns` options (each also from an environment variable, so the
/// key's path need not appear in `ps`; the key's contents are never logged).
struct APNSOptions: ParsableArguments {
    @Option(help: "APNs server: production (api.push.apple.com), sandbox (api.sandbox.push.apple.com), or https://host:port (env RICHPUSH_APNS_URL).")
    var apnsURL: String?
    @Option(help: "The app's bundle id, sent as apns-topic (env RICHPUSH_APNS_TOPIC).") var apnsTopic: String?
    @Option(help: "The .p8 signing key from Apple's developer portal (env RICHPUSH_APNS_KEY_FILE).") var apnsKeyFile: String?
    @Option(help: "Its 10-character key id (env RICHPUSH_APNS_KEY_ID).") var apnsKeyID: String?
    @Option(help: "The 10-character team id (env RICHPUSH_APNS_TEAM_ID).") var apnsTeamID: String?
    @Option(help: "PEM file of the CA to trust instead of the system's (a local apns-sim's ca.pem).") var apnsCAFile: String?
    @Option(help: "Seconds one request to APNs may take.") var apnsTimeout: Double = 10

    private func value(_ option: String?, _ variable: String) -> String? {
        option ?? ProcessInfo.processInfo.environment[variable]
    }

    var baseURL: String {
        switch value(apnsURL, "RICHPUSH_APNS_URL") ?? "production" {
        case "production": "https://api.push.apple.com"
        case "sandbox": "https://api.sandbox.push.apple.com"
        case let url: url
        }
    }

    /// The adapter's settings, or a message naming what is missing.
    func settings() throws -> RichPushWorkerConfiguration.APNSSettings {
        guard let topic = value(apnsTopic, "RICHPUSH_APNS_TOPIC"), let keyFile = value(apnsKeyFile, "RICHPUSH_APNS_KEY_FILE"),
              let keyID = value(apnsKeyID, "RICHPUSH_APNS_KEY_ID"), let teamID = value(apnsTeamID, "RICHPUSH_APNS_TEAM_ID") else {
            throw CLIError("--adapter apns needs --apns-topic, --apns-key-file, --apns-key-id and --apns-team-id (or their RICHPUSH_APNS_* variables)")
        }
        guard baseURL.hasPrefix("https://") else { throw CLIError("--apns-url must be production, sandbox or an https:// URL") }
        guard apnsTimeout > 0 else { throw CLIError("--apns-timeout must be positive") }
        let pem: String
        do {
            pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            throw CLIError("cannot read the APNs key file \(keyFile)")
        }
        do {
            let signer = try APNSSigningKey(pem: pem, keyID: keyID, teamID: teamID)
            return RichPushWorkerConfiguration.APNSSettings(baseURL: baseURL, topic: topic, signer: signer, timeout: .milliseconds(Int(apnsTimeout * 1000)))
        } catch {
            throw CLIError("\(error)")
        }
    }

    /// An HTTP/2 client trusting `--apns-ca-file` when given, else the system's roots.
    func httpClient() throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let file = apnsCAFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    }
}
