import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushQueue
import Testing

/// The tutorial's flow over real HTTP against a real Redis.
@Suite("Seed flow")
struct SeedFlowTests {
    @Test func registerSendFetchAndFollowTheStatus() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let registration = try await client.register("alice", handle: "token-a", tags: ["sports"])
                // A second POST for the same handle returns the same registration (the seed's rule).
                let again = try await client.execute(uri: "/api/register?handle=token-a", method: .post, headers: APIFixture.basic("alice"))
                {
                    try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                }
                #expect(again == registration)

                let accepted = try await client.sendImage("alice", message: "Check this image out!")
                #expect(accepted.status == .accepted)
                let id = try #require(accepted.json["id"] as? String)
                #expect(Int(id) != nil)
                #expect(accepted.json["status"] as? String == "/api/notifications/\(id)/status")

                // The job is queued, pointing at the record: taken into the stream as a worker would, to read it there.
                try await fixture.jobQueue.takeWaitingJobs()
                let entries = try await fixture.redis.send("XRANGE", fixture.queue.streamKey, "-", "+").array ?? []
                #expect(entries.count == 1)
                let fields = entries.first?.array?[1].array?.compactMap(\.string) ?? []
                #expect(fields.contains("rich-push") && fields.contains(id))

                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == APIFixture.png)
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(response.headers[.contentLength] == "\(APIFixture.png.count)")
                    let etag = try #require(response.headers[.eTag])
                    try await client.execute(
                        uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice") + [.ifNoneMatch: etag]
                    ) {
                        #expect($0.status == .notModified)
                    }
                }
                try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("alice")) {
                    response in
                    #expect(response.status == .ok)
                    #expect(response.json["state"] as? String == "fetched")
                    #expect((response.json["counts"] as? [String: Int])?["fetched"] == 1)
                }
                // A fetch naming the device counts once per device: alice's second phone counts
                // again, the same phone twice does not, and someone else's registration is 404.
                let second = try await client.register("alice", handle: "token-a2", tags: [])
                let bob = try await client.register("bob", handle: "token-b", tags: [])
                for installation in [registration, second, second] {
                    try await client.execute(
                        uri: "/api/notifications/\(id)?installation=\(installation)", method: .get, headers: APIFixture.basic("alice")
                    ) {
                        #expect($0.status == .ok)
                    }
                }
                try await client.execute(
                    uri: "/api/notifications/\(id)?installation=\(bob)", method: .get, headers: APIFixture.basic("alice")
                ) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("alice")) {
                    response in
                    #expect((response.json["counts"] as? [String: Int])?["fetched"] == 3)
                }
                for kind in ["displayed", "opened"] {
                    try await client.execute(
                        uri: "/api/notifications/\(id)/receipts", method: .post, headers: APIFixture.basic("alice"),
                        body: APIFixture.json(["kind": kind, "installation": registration])
                    ) { #expect($0.status == .ok) }
                }
                try await client.execute(uri: "/api/notifications/\(id)/status", method: .get, headers: APIFixture.basic("alice")) {
                    response in
                    #expect(response.json["state"] as? String == "opened")
                    let devices = response.json["devices"] as? [[String: Any]] ?? []
                    #expect(devices.first?["installation"] as? String == registration)
                }
            }
        }
    }

    @Test func noBodySendsTheDefaultImageLikeTheTutorial() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let accepted = try await client.execute(uri: "/api/notifications", method: .post, headers: APIFixture.basic("alice"))
                #expect(accepted.status == .accepted)
                let id = try #require(accepted.json["id"] as? String)
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { response in
                    let first = (response.json["notifications"] as? [[String: Any]])?.first
                    #expect(first?["message"] as? String == "Check this image out!")
                    #expect(first?["richType"] as? String == "img")
                    #expect(first?["target"] as? String == "username:alice")
                }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(response.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
                }
            }
        }
    }

    @Test func multipartUploadLikeCurlDashF() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let boundary = "----richpush-test"
                var body: [UInt8] = []
                func add(_ text: String) { body += Array(text.utf8) }
                add("--\(boundary)\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nFrom the form\r\n")
                add(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"logo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                )
                let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 300) + [13, 10, 0]
                body += jpeg
                add("\r\n--\(boundary)--\r\n")
                let accepted = try await client.execute(
                    uri: "/api/notifications", method: .post,
                    headers: APIFixture.basic("alice") + [.contentType: "multipart/form-data; boundary=\(boundary)"],
                    body: ByteBuffer(bytes: body))
                #expect(accepted.status == .accepted, "\(String(buffer: accepted.body))")
                let id = try #require(accepted.json["id"] as? String)
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { response in
                    #expect(response.bytes == jpeg)
                    #expect(response.headers[.contentType] == "image/jpeg")
                }
            }
        }
    }

    @Test func listPagesWithACursor() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                for index in 0..<5 { _ = try await client.sendImage("alice", message: "n\(index)") }
                let first = try await client.execute(uri: "/api/notifications?limit=3", method: .get, headers: APIFixture.basic("alice"))
                let page1 = (first.json["notifications"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
                #expect(page1 == ["n4", "n3", "n2"])
                let cursor = try #require(first.json["nextCursor"] as? String)
                let second = try await client.execute(
                    uri: "/api/notifications?limit=3&cursor=\(cursor)", method: .get, headers: APIFixture.basic("alice"))
                let page2 = (second.json["notifications"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
                #expect(page2 == ["n1", "n0"])
                #expect(second.json["nextCursor"] == nil)
            }
        }
    }
}
