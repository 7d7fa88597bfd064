import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

@testable import RichPushAPI

/// The dead letters page past its newest 50: an "older" cursor that walks every match once, in
/// order, across partitions, whatever arrives meanwhile.
@Suite("Console dead letters, paged")
struct ConsoleDeadLetterPagingTests {
    @Test func pagesWalkEveryMatchOnceNewestFirst() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            var shop: [String] = []
            for index in 0..<120 {
                shop.append(try await fixture.addDeadLetter(app: "shop", error: "timeout #\(index)"))
                if index % 4 == 0 { try await fixture.addDeadLetter(app: "news", error: "timeout") }
            }
            let expected = Array(shop.reversed())
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                var seen: [String] = []
                var cursor: String?
                var pages = 0
                repeat {
                    let query = "app=shop" + (cursor.map { "&cursor=" + $0 } ?? "")
                    let page = try await client.consoleGet("/console/dead-letters?" + query, session: alice)
                    let letters = try #require(page.json["deadLetters"] as? [[String: Any]])
                    seen += letters.compactMap { ($0["ref"] as? String)?.split(separator: "/").last.map(String.init) }
                    cursor = page.json["next"] as? String
                    pages += 1
                    // A letter that dies meanwhile is newer than every page: no page shows it.
                    if pages == 1 { try await fixture.addDeadLetter(app: "shop", error: "timeout, later") }
                } while cursor != nil && pages < 10
                #expect(pages == 3)
                #expect(seen == expected, "every match once, newest first")
                let html = String(buffer: try await client.consoleGet("/console/dead-letters?app=shop", session: alice, html: true).body)
                #expect(html.contains(#"id="older-page""#))
                let bad = try await client.consoleGet("/console/dead-letters?cursor=nonsense", session: alice)
                #expect(bad.status == .badRequest && bad.errorCode == "bad_cursor")
            }
        }
    }

    @Test func pagesMergeThePartitionsWithoutLosingTies() async throws {
        try await withRedisServer { server in
            let redis = RedisConnectionPool(configuration: server.configuration, size: 1)
            let prefix = String(uniqueKeyPrefix("dlpages").dropLast())
            let queues = ["q0", "q1", "q2"].map {
                JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: prefix, partition: $0))
            }
            // The same ids in every partition (ties across partitions), 7 each.
            for queue in queues {
                for sequence in 0..<7 {
                    _ = try await redis.send(
                        "XADD", queue.configuration.deadKey, "1000-\(sequence)", "v", "1", "type", "t", "payload", "x", "enq", "1", "err",
                        "e")
                }
            }
            let search = DeadLetterSearch(queues: queues)
            let filter = try DeadLetterFilter(ConsoleForm(fields: []), access: ConsoleAccess(role: .viewer))
            var seen: [String] = []
            var cursor: DeadLetterSearch.Found.Position?
            repeat {
                let page = try await search.newest(filter, limit: 4, scanLimit: 50_000, after: cursor)
                seen += page.found.map(\.reference)
                cursor = page.next
            } while cursor != nil && seen.count < 100
            let expected = (0..<7).reversed().flatMap { sequence in ["q0", "q1", "q2"].map { "\($0)/1000-\(sequence)" } }
            #expect(seen == expected)
            await redis.close()
        }
    }
}
