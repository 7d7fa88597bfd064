import APITestSupport
import AsyncHTTPClient
import Foundation
import RedisTestSupport
import RichPushStorage
import Testing

/// `GET /api/notifications/missed`: what a device was sent and has not fetched, on real Redis
/// through a worker and the simulated hub, with its cursor and its refusals.
@Suite("Catching up on missed pushes")
struct MissedPushesTests {
    @Test func anOfflineIPhoneListsWhatItHasNotFetchedAfterItsCursor() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                // Registered, and never listening: the hub keeps it one push, the newest.
                let device = try await register(pipeline, handle: "\(pipeline.prefix)-missed")
                var ids: [Int] = []
                try await withWorker(pipeline.worker()) {
                    for index in 0..<3 {
                        let id = try await pipeline.send(json: ["message": "m\(index)", "richType": "text", "payload": "p\(index)"])
                        ids.append(id)
                        try await waitUntil(timeout: .seconds(60), "push \(id) to be held") {
                            (try await pipeline.status(id)["counts"] as? [String: Int])?["held"] == 1
                        }
                    }
                }
                let all = try await get(pipeline, "api/notifications/missed?installation=\(device)")
                #expect(all.status == 200)
                #expect(listed(all.json) == ids.map(String.init), "\(all.json)")
                #expect(all.json["complete"] as? Bool == true)
                let cursor = try #require(all.json["cursor"] as? String)
                #expect(Int(cursor) ?? 0 >= ids[2])
                // Fetched as the device fetches: no longer missed.
                #expect(try await get(pipeline, "api/notifications/\(ids[0])?installation=\(device)").status == 200)
                #expect(
                    listed(try await get(pipeline, "api/notifications/missed?installation=\(device)").json)
                        == [ids[1], ids[2]].map(String.init))
                // After a cursor, only what came later; a limit stops the page with a cursor at its last.
                #expect(
                    listed(try await get(pipeline, "api/notifications/missed?installation=\(device)&after=\(ids[1])").json) == [
                        String(ids[2])
                    ])
                let first = try await get(pipeline, "api/notifications/missed?installation=\(device)&limit=1")
                #expect(listed(first.json) == [String(ids[1])])
                #expect(first.json["cursor"] as? String == String(ids[1]))
                #expect(listed(try await get(pipeline, "api/notifications/missed?installation=\(device)&after=\(cursor)").json) == [])
            }
        }
    }

    @Test func badQueriesAndOthersDevicesAreRefused() async throws {
        try await withRedisServer { server in
            try await Pipeline.start(server: server) { pipeline in
                let device = try await register(pipeline, handle: "\(pipeline.prefix)-refused")
                for (query, status, code) in [
                    ("", 400, "missing_installation"), ("installation=\(device)&after=-1", 400, "bad_cursor"),
                    ("installation=\(device)&after=x", 400, "bad_cursor"), ("installation=\(device)&limit=0", 400, "bad_limit"),
                    ("installation=\(device)&limit=101", 400, "bad_limit"),
                    ("installation=\(String(repeating: "a", count: 300))", 404, nil),
                    ("installation=not-a-device", 404, nil),
                ] as [(String, Int, String?)] {
                    let answer = try await get(pipeline, "api/notifications/missed?\(query)")
                    #expect(answer.status == status, "\(query.prefix(40)): \(answer.json)")
                    if let code { #expect((answer.json["error"] as? [String: Any])?["code"] as? String == code, "\(answer.json)") }
                }
                // bob may not ask about alice's device.
                let bob = try await get(pipeline, "api/notifications/missed?installation=\(device)", as: "bob")
                #expect(bob.status == 404 || bob.status == 401, "\(bob.json)")
            }
        }
    }

    /// Registers an iPhone of alice's with `handle`, as the seed's app does: its registration id.
    private func register(_ pipeline: Pipeline, handle: String) async throws -> String {
        let (status, body) = try await request(pipeline, "POST", "api/register?handle=\(handle)")
        let id = try #require(status == 200 ? try JSONDecoder().decode(String.self, from: body) : nil, "\(status)")
        let (put, answer) = try await request(
            pipeline, "PUT", "api/register/\(id)", json: ["Platform": "apns", "Handle": handle, "Tags": []])
        #expect(put == 200, "\(String(decoding: answer, as: UTF8.self))")
        return id
    }

    /// A GET of `path` (with its query) as `user`: the status and the JSON object answered.
    private func get(_ pipeline: Pipeline, _ path: String, as user: String = "alice") async throws -> (status: Int, json: [String: Any]) {
        let (status, body) = try await request(pipeline, "GET", path, as: user)
        return (status, (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:])
    }

    /// Over AsyncHTTPClient: URLSession on Linux waits on a 401's Basic challenge.
    private func request(
        _ pipeline: Pipeline, _ method: String, _ path: String, as user: String = "alice", json: [String: Any]? = nil
    ) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: pipeline.baseURL.absoluteString + "/" + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString())
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(try JSONSerialization.data(withJSONObject: json))
        }
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), Data(buffer: body))
    }

    private func listed(_ json: [String: Any]) -> [String] {
        ((json["notifications"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
    }
}
