import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import Hummingbird
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// `--durability replicated`: a notification is acknowledged only once a replica has it; without a
/// replica answering in time the API says 503 + Retry-After, and a retry with the same
/// Idempotency-Key gets the first answer rather than a second notification.
@Suite("Replicated durability")
struct DurabilityTests {
    @Test func aCreateWaitsForAReplicaAndIs503WithoutOne() async throws {
        try await withRedisServer { master in
            let replica = try await RedisServer(arguments: ["--replicaof", "127.0.0.1", "\(master.port)"])
            do {
                try await waitUntil(timeout: .seconds(60), "the replica to sync") {
                    (try await replica.probe("INFO", "replication").string ?? "").contains("master_link_status:up")
                }
                let fixture = try await APIFixture(server: master) { $0.durability = .replicated(replicas: 1, timeout: .milliseconds(500)) }
                try await fixture.test { client in
                    let headers = APIFixture.basic("alice") + [.contentType: "application/json"]
                    let body = APIFixture.json(["message": "kept twice", "richType": "text", "payload": "p"])
                    // As a client does on 503, again after a while: a busy machine can make the
                    // replica miss a 500 ms WAIT (a 503 is the guarantee working, not a failure).
                    func createRetrying(_ headers: HTTPFields) async throws -> TestResponse {
                        var answer = try await client.execute(uri: "/api/notifications", method: .post, headers: headers, body: body)
                        let deadline = ContinuousClock.now + .seconds(20)
                        while answer.status == .serviceUnavailable, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(250))
                            answer = try await client.execute(uri: "/api/notifications", method: .post, headers: headers, body: body)
                        }
                        return answer
                    }
                    let created = try await createRetrying(headers)
                    #expect(created.status == .accepted)
                    let id = try #require((created.json["id"] as? String).flatMap(Int.init))
                    // Acknowledged means the replica has it.
                    #expect(try await replica.probe("EXISTS", fixture.keys.notification(id)).int == 1)

                    await replica.shutdownGently()
                    let key = HTTPField.Name("Idempotency-Key")!
                    let refused = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: headers + [key: "order-1"], body: body)
                    #expect(
                        refused.status == .serviceUnavailable && refused.headers[.retryAfter] != nil, "\(refused.status) \(refused.json)")
                    // The notification exists on the master, but a replayed answer is an
                    // acknowledgement too: still 503 while no replica has it.
                    let again = try await client.execute(
                        uri: "/api/notifications", method: .post, headers: headers + [key: "order-1"], body: body)
                    #expect(again.status == .serviceUnavailable, "\(again.status) \(again.json)")
                    // A replica again: the retry replays the first notification, which it now has.
                    let second = try await RedisServer(arguments: ["--replicaof", "127.0.0.1", "\(master.port)"])
                    do {
                        try await waitUntil(timeout: .seconds(60), "the new replica to sync") {
                            (try await second.probe("INFO", "replication").string ?? "").contains("master_link_status:up")
                        }
                        // A replica just synced under a busy machine may miss the first WAIT.
                        let retried = try await createRetrying(headers + [key: "order-1"])
                        #expect(
                            retried.status == .accepted && retried.headers[HTTPField.Name("Idempotent-Replayed")!] == "true",
                            "\(retried.status)")
                        let replayed = try #require((retried.json["id"] as? String).flatMap(Int.init))
                        #expect(try await second.probe("EXISTS", fixture.keys.notification(replayed)).int == 1)
                    } catch {
                        await second.shutdownGently()
                        throw error
                    }
                    await second.shutdownGently()
                }
            } catch {
                await replica.shutdownGently()
                throw error
            }
            await replica.shutdownGently()
        }
    }
}
