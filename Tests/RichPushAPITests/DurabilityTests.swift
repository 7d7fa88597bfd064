import Foundation
import Hiredis
import HTTPTypes
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
                try await waitUntil(timeout: .seconds(20), "the replica to sync") {
                    (try await replica.probe("INFO", "replication").string ?? "").contains("master_link_status:up")
                }
                let fixture = try await APIFixture(server: master) { $0.durability = .replicated(replicas: 1, timeout: .milliseconds(500)) }
                try await fixture.test { client in
                    let headers = APIFixture.basic("alice") + [.contentType: "application/json"]
                    let body = APIFixture.json(["message": "kept twice", "richType": "text", "payload": "p"])
                    let created = try await client.execute(uri: "/api/notifications", method: .post, headers: headers, body: body)
                    #expect(created.status == .accepted)
                    let id = try #require((created.json["id"] as? String).flatMap(Int.init))
                    // Acknowledged means the replica has it.
                    #expect(try await replica.probe("EXISTS", fixture.keys.notification(id)).int == 1)

                    await replica.shutdownGently()
                    let key = HTTPField.Name("Idempotency-Key")!
                    let refused = try await client.execute(uri: "/api/notifications", method: .post, headers: headers + [key: "order-1"], body: body)
                    #expect(refused.status == .serviceUnavailable && refused.headers[.retryAfter] != nil, "\(refused.status) \(refused.json)")
                    let retried = try await client.execute(uri: "/api/notifications", method: .post, headers: headers + [key: "order-1"], body: body)
                    #expect(retried.status == .accepted && retried.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
                }
            } catch {
                await replica.shutdownGently()
                throw error
            }
            await replica.shutdownGently()
        }
    }
}
