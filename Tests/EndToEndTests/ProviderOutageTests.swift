import Foundation
import RedisTestSupport
import Testing

/// Two `richpush worker --adapter apns,fcm` processes while `richpush apns-sim` and `richpush
/// fcm-sim` run out of quota for 20 s mid-run (429 with `Retry-After: 20`): the first 429 holds
/// the provider for the whole fleet, no request reaches a simulator until the Retry-After has
/// passed, nothing is dead-lettered, and every push arrives exactly once after the hold.
@Suite("Provider outage", .serialized)
struct ProviderOutageTests {
    static let outageSeconds = 20.0

    @Test func aQuotaRunOutHoldsTheFleetAndLosesNothing() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "outage") { native in
                let (iPhones, androids, notifications) = (6, 6, 10)
                try await native.register(iPhones: iPhones, first: 0xAB0)
                try await native.register(androids: androids, named: "outage")
                // Both run out after 8 accepted requests, for 20 s.
                let apns = try await native.startAPNsSim(["--outage", "8:\(Int(Self.outageSeconds))"])
                let fcm = try await native.startFCMSim(["--quota-outage", "8:\(Int(Self.outageSeconds))"])
                try await waitUntil(timeout: .seconds(60), "the simulators to listen") {
                    apns.process.log.contains("listening") && fcm.process.log.contains("listening")
                }
                _ = try await native.startWorkers(["w1", "w2"], adapter: "apns,fcm", apns.workerArguments + fcm.workerArguments)
                _ = try await native.createNotifications(notifications)
                try await waitUntil(timeout: .seconds(120), "every push to be accepted after the hold") {
                    apns.requests.filter { $0["status"] as? Int == 200 }.count >= notifications * iPhones
                        && fcm.requests.filter { $0["status"] as? Int == 200 }.count >= notifications * androids
                }
                for (platform, requests, devices, key) in [
                    ("APNs", apns.requests, iPhones, "path"), ("FCM", fcm.requests, androids, "token"),
                ] {
                    let first429 = try #require(
                        requests.first { $0["status"] as? Int == 429 }?["at"] as? Double, "\(platform) answered no 429")
                    // Requests already in flight when the first 429 came back may still arrive; after
                    // that, nothing until the Retry-After has passed, from either worker.
                    let early = requests.filter {
                        ($0["at"] as? Double).map { $0 > first429 + 2 && $0 < first429 + Self.outageSeconds - 0.2 } ?? false
                    }
                    #expect(
                        early.isEmpty,
                        "\(platform): \(early.count) requests during the hold, first at \(early.first ?? [:]) (first 429 at \(first429))")
                    // Every push once: one 200 per device per notification.
                    let accepted = requests.filter { $0["status"] as? Int == 200 }.compactMap { $0[key] as? String }
                    #expect(accepted.count == notifications * devices, "\(platform): \(accepted.count) accepted")
                    #expect(
                        Dictionary(grouping: accepted, by: { $0 }).values.allSatisfy { $0.count == notifications },
                        "\(platform): a device got a push twice or none")
                }
                #expect(try await native.queue.deadLetterCount() == 0, "a provider's hold dead-lettered jobs")
            }
        }
    }
}
