import Foundation
import RedisTestSupport
import Testing

/// Two `richpush worker --adapter apns` processes, `richpush apns-sim` answering 410
/// `Unregistered` for a third of the device tokens (always the same ones), and many notifications
/// to every device in flight at once, each batch sent a few streams at a time: a dead token gets
/// one request, the one Apple answers 410; neither worker sends to it again: not the rest of any
/// batch the worker has under way, nor a job that resolved the device before (the fleet's
/// dead-token set, checked after the round claims the device).
@Suite("Dead tokens across a fleet", .serialized)
struct DeadTokenFleetTests {
    @Test func noPushGoesToATokenAfterItsUnregisteredAnswer() async throws {
        try await withRedisServer { server in
            try await NativeProcesses.with(server: server, prefix: "gone") { native in
                let (iPhones, notifications) = (12, 40)
                try await native.register(iPhones: iPhones, first: 0x60E)
                let apns = try await native.startAPNsSim(["--fail", "410:34%", "--delay-ms", "20-40", "--max-streams", "4", "--seed", "3"])
                try await waitUntil(timeout: .seconds(60), "the simulator to listen") { apns.process.log.contains("listening") }
                _ = try await native.startWorkers(["w1", "w2"], adapter: "apns", apns.workerArguments)
                let ids = try await native.createNotifications(notifications)
                // Every job ends (a notification resolved after a dead device was removed does not
                // address it at all), and every device a notification addressed was sent or found dead.
                // Drained: nothing in the stream, pending, retrying, nor waiting in the app's lane
                // (fair scheduling keeps jobs there until a worker takes them: without `waiting`,
                // a run fast enough found the queue "drained" before any worker took a job).
                try await waitUntil(timeout: .seconds(90), "the queue to drain") { try await native.queue.stats().backlog == 0 }
                var sent = 0
                for id in ids {
                    let status = try #require(try await native.store.status(id: id))
                    let ended = (status.counts["sent"] ?? 0) + (status.counts["invalidToken"] ?? 0)
                    #expect(
                        ended == status.devices.count && ended > 0,
                        "notification \(id): \(status.counts) for \(status.devices.count) devices")
                    sent += status.counts["sent"] ?? 0
                }
                let requests = apns.requests
                let dead = Set(requests.filter { $0["status"] as? Int == 410 }.compactMap { $0["path"] as? String })
                #expect(!dead.isEmpty && dead.count < iPhones, "\(dead.count) dead tokens")
                for path in dead {
                    let toIt = requests.filter { $0["path"] as? String == path }
                    // One request: the one answered 410. A device has one request in flight in the
                    // whole fleet (a round claims it, and releases it only after marking the token
                    // dead), and a round's several pushes to it go out one after another. (Without
                    // the stop, all 40 notifications would reach a dead token.)
                    #expect(toIt.count == 1, "\(path) got \(toIt.count) requests")
                }
                // Each push Apple accepted once, and every device never declared dead got them all.
                let accepted = requests.filter { $0["status"] as? Int == 200 }.compactMap { $0["path"] as? String }
                #expect(accepted.count == sent)
                let perDevice = Dictionary(grouping: accepted, by: { $0 }).mapValues(\.count)
                #expect(perDevice.count == iPhones - dead.count && perDevice.values.allSatisfy { $0 == notifications }, "\(perDevice)")
            }
        }
    }
}
