import ArgumentParser
import Foundation
import RichPushApps

/// The credential flags of `richpush apps create` and `apps set`: each platform's files and ids.
/// Files are read here and their contents checked; a mistake names the flag, never the secret.
struct AppCredentialOptions: ParsableArguments {
    @Option(help: "The app's name as the console shows it.") var name: String?
    @Option(help: "APNs: the .p8 signing key (with --apns-key-id, --apns-team-id, --apns-bundle-id).") var apnsKeyFile: String?
    @Option(help: "APNs: the key's 10-character id.") var apnsKeyId: String?
    @Option(help: "APNs: the 10-character team id.") var apnsTeamId: String?
    @Option(help: "APNs: the app's bundle id, sent as apns-topic.") var apnsBundleId: String?
    @Option(help: "FCM: the service-account JSON from the Firebase console.") var fcmServiceAccount: String?
    @Option(help: "Web Push: a VAPID private key (PEM P-256); without it the app keeps its key pair, or gets a new one.")
    var webPushPrivateKeyFile: String?
    @Option(help: "Web Push: the VAPID contact, mailto:… or https://… (RFC 8292).") var webPushSubject: String?

    /// What the flags set, and a Web Push subject given without a key.
    func credentials() throws -> (credentials: AppCredentials, webPushSubject: String?) {
        var credentials = AppCredentials()
        if let name, let problem = AppChange.nameProblem(name) { throw CLIError("--name: \(problem)") }
        let apnsFlags = [apnsKeyFile, apnsKeyId, apnsTeamId, apnsBundleId]
        if apnsFlags.contains(where: { $0 != nil }) {
            guard let keyFile = apnsKeyFile, let keyID = apnsKeyId, let teamID = apnsTeamId, let bundleID = apnsBundleId else {
                throw CLIError("APNs credentials need all of --apns-key-file, --apns-key-id, --apns-team-id and --apns-bundle-id")
            }
            let pem = try Self.read(keyFile, flag: "--apns-key-file", limit: 4096)
            credentials.apns = try check { () throws(AppError) in
                try APNSCredential(keyPEM: pem, keyID: keyID, teamID: teamID, bundleID: bundleID)
            }
        }
        if let file = fcmServiceAccount {
            let json = try Self.read(file, flag: "--fcm-service-account", limit: 64 * 1024)
            credentials.fcm = try check { () throws(AppError) in try FCMCredential(serviceAccountJSON: json) }
        }
        if let file = webPushPrivateKeyFile {
            let pem = try Self.read(file, flag: "--web-push-private-key-file", limit: 4096)
            credentials.webPush = try check { () throws(AppError) in try WebPushCredential(privateKey: pem, subject: webPushSubject ?? "") }
            return (credentials, nil)
        }
        return (credentials, webPushSubject)
    }

    private func check<T>(_ body: () throws(AppError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CLIError(error.description)
        }
    }

    static func read(_ file: String, flag: String, limit: Int) throws -> String {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file), let size = attributes[.size] as? Int,
            let text = try? String(contentsOfFile: file, encoding: .utf8)
        else {
            throw CLIError("\(flag) \(file): not a readable UTF-8 file")
        }
        guard size <= limit else { throw CLIError("\(flag) \(file): \(size) bytes, more than such a file ever holds (\(limit))") }
        return text
    }
}
