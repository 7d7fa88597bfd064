import ArgumentParser
import Foundation
import NIOSSL
import RichPushAPNS
import RichPushApps
import RichPushHTTP2
import RichPushWorker

/// `richpush worker --adapter apns` options (each also from an environment variable, so the
/// key's path need not appear in `ps`; the key's contents are never logged).
struct APNSOptions: ParsableArguments {
    @Option(
        help:
            "APNs server for installations of environment production, every registration without Environment sandbox: production (api.push.apple.com), sandbox (api.sandbox.push.apple.com), or https://host:port (env RICHPUSH_APNS_URL)."
    )
    var apnsURL: String?
    @Option(
        help:
            "APNs server for installations registered with Environment sandbox (development builds): same forms as --apns-url, default sandbox (env RICHPUSH_APNS_SANDBOX_URL). Connected at its first push."
    )
    var apnsSandboxURL: String?
    @Option(help: "The app's bundle id, sent as apns-topic (env RICHPUSH_APNS_TOPIC).") var apnsTopic: String?
    @Option(help: "The .p8 signing key from Apple's developer portal (env RICHPUSH_APNS_KEY_FILE).") var apnsKeyFile: String?
    @Option(help: "Its 10-character key id (env RICHPUSH_APNS_KEY_ID).") var apnsKeyID: String?
    @Option(help: "The 10-character team id (env RICHPUSH_APNS_TEAM_ID).") var apnsTeamID: String?
    @Option(
        help:
            "PEM file of the CAs to trust instead of the system's, for both APNs servers (a local apns-sim's ca.pem; two simulators' CAs may share one file)."
    ) var apnsCAFile: String?
    @Option(help: "Seconds one request to APNs may take.") var apnsTimeout: Double = 10
    @Option(help: "HTTP/2 connections to APNs per worker (each carries up to the server's stream limit, 1,000 at Apple).")
    var apnsConnections = 2
    @Flag(
        help:
            "Allow an http:// --apns-url or --apns-sandbox-url: cleartext HTTP/2 (prior knowledge), for a local apns-sim only; Apple requires TLS."
    )
    var apnsCleartext = false

    private func value(_ option: String?, _ variable: String) -> String? {
        option ?? ProcessInfo.processInfo.environment[variable]
    }

    /// The adapter's settings and its client, or a message naming what is missing or wrong. The
    /// credential flags when given, else `stored` (the default app's, which the worker applies
    /// over the flags' anyway while it runs).
    func settings(stored: APNSCredential? = nil) throws -> RichPushWorkerConfiguration.APNSSettings {
        guard apnsTimeout > 0 else { throw CLIError("--apns-timeout must be positive") }
        guard (1...64).contains(apnsConnections) else { throw CLIError("--apns-connections must be 1 to 64") }
        let endpoint = try apnsEndpoint(value(apnsURL, "RICHPUSH_APNS_URL") ?? "production", option: "--apns-url")
        let sandboxEndpoint = try apnsEndpoint(
            value(apnsSandboxURL, "RICHPUSH_APNS_SANDBOX_URL") ?? "sandbox", option: "--apns-sandbox-url")
        let (topic, signer) = try credentials(stored: stored)
        var trustRoots: [NIOSSLCertificate]?
        if let file = apnsCAFile {
            do {
                trustRoots = try NIOSSLCertificate.fromPEMFile(file)
            } catch {
                throw CLIError("cannot read the CA file \(file): \(error)")
            }
        }
        // Two clients, one per Apple service; neither connects before its first push.
        func client(_ endpoint: HTTP2Client.Endpoint) throws -> HTTP2Client {
            let configuration = HTTP2Client.Configuration(
                endpoint: endpoint, trustRoots: trustRoots, connections: apnsConnections,
                requestTimeout: .milliseconds(Int(apnsTimeout * 1000)), responseIDHeader: "apns-id")
            do {
                return try HTTP2Client(configuration: configuration)
            } catch {
                throw CLIError("cannot set up TLS for APNs: \(error)")
            }
        }
        return RichPushWorkerConfiguration.APNSSettings(
            client: try client(endpoint), sandboxClient: try client(sandboxEndpoint), topic: topic, signer: signer)
    }

    /// The topic and signer of the credential flags, else of `stored`.
    private func credentials(stored: APNSCredential?) throws -> (topic: String, signer: APNSSigningKey) {
        guard let topic = value(apnsTopic, "RICHPUSH_APNS_TOPIC"), let keyFile = value(apnsKeyFile, "RICHPUSH_APNS_KEY_FILE"),
            let keyID = value(apnsKeyID, "RICHPUSH_APNS_KEY_ID"), let teamID = value(apnsTeamID, "RICHPUSH_APNS_TEAM_ID")
        else {
            if let stored {
                do {
                    return (stored.bundleID, try APNSSigningKey(pem: stored.keyPEM, keyID: stored.keyID, teamID: stored.teamID))
                } catch {
                    throw CLIError("the default app's APNs credentials: \(error)")
                }
            }
            throw CLIError(
                "--adapter apns needs --apns-topic, --apns-key-file, --apns-key-id and --apns-team-id (or their RICHPUSH_APNS_* variables), "
                    + "or the default app's APNs credentials with --kek-file (docs/apps.md)")
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            throw CLIError("cannot read the APNs key file \(keyFile)")
        }
        do {
            return (topic, try APNSSigningKey(pem: pem, keyID: keyID, teamID: teamID))
        } catch {
            throw CLIError("\(error)")
        }
    }

    private func apnsEndpoint(_ text: String, option: String) throws -> HTTP2Client.Endpoint {
        do {
            return try HTTP2Client.Endpoint(apns: text, allowCleartext: apnsCleartext)
        } catch {
            throw CLIError("\(option): \(error)")
        }
    }
}
