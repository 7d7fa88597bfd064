import ArgumentParser
import AsyncHTTPClient
import Foundation
import RichPushFCM
import RichPushWorker

/// `richpush worker` options for Android devices (platform `fcm`) through FCM HTTP v1.
struct FCMOptions: ParsableArguments {
    @Option(help: "Send to devices of platform fcm through FCM with this service-account JSON (Firebase console → Project settings → Service accounts; env RICHPUSH_FCM_CREDENTIALS).")
    var fcmCredentials: String?
    @Option(help: "FCM's base URL, or a local fcm-sim's (env RICHPUSH_FCM_URL).") var fcmURL: String?

    /// The FCM route's settings, or nil when no credentials are given.
    func settings() throws -> RichPushWorkerConfiguration.FCMSettings? {
        let environment = ProcessInfo.processInfo.environment
        guard let file = fcmCredentials ?? environment["RICHPUSH_FCM_CREDENTIALS"] else { return nil }
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
        return RichPushWorkerConfiguration.FCMSettings(http: HTTPClient(eventLoopGroupProvider: .singleton), baseURL: baseURL, account: account)
    }
}
