import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import RichPushAPI
import RichPushQueue
import Testing

/// The dead letters' and the queues' platform filter: it finds the jobs whose pushes to that
/// platform failed in their last attempt, as the worker kept them (`fp`, through the queue's own
/// retry and dead-letter scripts, not written by hand).
@Suite("Console platform filter")
struct ConsolePlatformFilterTests {
    @Test func deadLettersAndRetriesAreFoundByThePlatformThatFailed() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            let queue = fixture.api.jobQueue
            try await queue.ensureGroup()
            try await queue.enqueue((0..<9).map { _ in JobRequest(type: "probe", payload: [1], app: "shop") })
            let jobs = try await queue.take(for: "w", count: 9).map { try $0.get() }
            try #require(jobs.count == 9)
            // Dead: 3 on apns, 2 on fcm, 1 on both, 1 naming none. Retrying: 2 on fcm.
            let dead: [[String]] = [["apns"], ["apns"], ["apns"], ["fcm"], ["fcm"], ["apns", "fcm"], []]
            for (job, platforms) in zip(jobs, dead) { try await queue.deadLetter(id: job.id, error: "failed", platforms: platforms) }
            for job in jobs.suffix(2) { try await queue.retry(job, after: .seconds(600), error: "UNAVAILABLE", platforms: ["fcm"]) }
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                func letters(_ query: String) async throws -> [[String: Any]] {
                    try #require(
                        try await client.consoleGet("/console/dead-letters?" + query, session: alice).json["deadLetters"]
                            as? [[String: Any]])
                }
                #expect(try await letters("app=shop").count == 7)
                let onAPNs = try await letters("platform=apns")
                #expect(onAPNs.count == 4)
                #expect(onAPNs.allSatisfy { ($0["platforms"] as? [String])?.contains("apns") == true })
                #expect(try await letters("platform=fcm&app=shop").count == 3)
                #expect(try await letters("platform=webpush").isEmpty)
                // `browser` is Web Push's other name, as at registration.
                #expect(try await letters("platform=browser").isEmpty)
                let count = try await client.consolePost("/console/dead-letters/count", session: alice, [("platform", "fcm")])
                #expect(count.json["count"] as? Int == 3)
                #expect((count.json["filter"] as? String)?.contains("platform=fcm") == true)
                let retries = try #require(
                    try await client.consoleGet("/console/queues?platform=fcm&kind=retry", session: alice).json["jobs"] as? [[String: Any]])
                #expect(retries.count == 2)
                #expect(
                    try #require(
                        try await client.consoleGet("/console/queues?platform=apns", session: alice).json["jobs"] as? [[String: Any]]
                    ).isEmpty)
                let page = try await client.consoleGet("/console/dead-letters?platform=apns", session: alice, html: true)
                #expect(String(buffer: page.body).contains(#"<option value="apns" selected>"#))
                for bad in ["platform=ios", "platform=" + String(repeating: "a", count: 40)] {
                    let response = try await client.consoleGet("/console/dead-letters?" + bad, session: alice)
                    #expect(response.status == .badRequest, "\(bad)")
                    #expect(response.errorCode == "bad_filter")
                }
            }
        }
    }
}
