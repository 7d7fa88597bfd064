import ArgumentParser
import Foundation
import NIOSSL
import RichPushAPNS
import RichPushWorker
import RichPushHTTP2

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
    @Option(help: "HTTP/2 connections to APNs per worker (each carries up to the server's stream limit, 1,000 at Apple).")
    var apnsConnections = 2
    @Flag(help: "Allow an http:// --apns-url: cleartext HTTP/2 (prior knowledge), for a local apns-sim only; Apple requires TLS.")
    var apnsCleartext = false

    private func value(_ option: String?, _ variable: String) -> String? {
        option ?? ProcessInfo.processInfo.environment[variable]
    }

    /// The adapter's settings and its client, or a message naming what is missing or wrong.
    func settings() throws -> RichPushWorkerConfiguration.APNSSettings {
        guard let topic = value(apnsTopic, "RICHPUSH_APNS_TOPIC"), let keyFile = value(apnsKeyFile, "RICHPUSH_APNS_KEY_FILE"),
              let keyID = value(apnsKeyID, "RICHPUSH_APNS_KEY_ID"), let teamID = value(apnsTeamID, "RICHPUSH_APNS_TEAM_ID") else {
            throw CLIError("--adapter apns needs --apns-topic, --apns-key-file, --apns-key-id and --apns-team-id (or their RICHPUSH_APNS_* variables)")
        }
        guard apnsTimeout > 0 else { throw CLIError("--apns-timeout must be positive") }
        guard (1...64).contains(apnsConnections) else { throw CLIError("--apns-connections must be 1 to 64") }
        let endpoint: HTTP2Client.Endpoint
        do {
            endpoint = try HTTP2Client.Endpoint(apns: value(apnsURL, "RICHPUSH_APNS_URL") ?? "production", allowCleartext: apnsCleartext)
        } catch {
            throw CLIError("--apns-url: \(error)")
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            throw CLIError("cannot read the APNs key file \(keyFile)")
        }
        let signer: APNSSigningKey
        do {
            signer = try APNSSigningKey(pem: pem, keyID: keyID, teamID: teamID)
        } catch {
            throw CLIError("\(error)")
        }
        var trustRoots: [NIOSSLCertificate]?
        if let file = apnsCAFile {
            do {
                trustRoots = try NIOSSLCertificate.fromPEMFile(file)
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
        }
        let configuration = HTTP2Client.Configuration(endpoint: endpoint, trustRoots: trustRoots, connections: apnsConnections,
                                                     requestTimeout: .milliseconds(Int(apnsTimeout * 1000)), responseIDHeader: "apns-id")
        let client: HTTP2Client
        do {
            client = try HTTP2Client(configuration: configuration)
        } catch {
            throw CLIError("cannot set up TLS for APNs: \(error)")
        }
        return RichPushWorkerConfiguration.APNSSettings(client: client, topic: topic, signer: signer)
    }
}
