import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import Testing
import Yams

@testable import RichPushAPI

/// openapi.yaml stays true: every answer the API gives in these flows is documented, for its
/// path, method and status, and JSON answers carry the documented required fields.
@Suite("OpenAPI document")
struct OpenAPITests {
    /// A device's state in a status is one of the outcome counters, `expired` included (a
    /// stateful fuzz run met an expired held push the document did not allow), or `queued` (a
    /// device its dead-lettered job had marked failed, queued again by the dead letter's replay).
    @Test func deviceStatesAndCountersAreTheCodes() throws {
        let document = try OpenAPIDocument.load()
        let schemas = (document.root["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let device = (schemas?["Device"] as? [String: Any])?["properties"] as? [String: Any]
        let states = (device?["state"] as? [String: Any])?["enum"] as? [String]
        let counters = (schemas?["Counts"] as? [String: Any])?["required"] as? [String]
        #expect(Set(states ?? []) == Set(DeliveryCounter.allCases.map(\.rawValue) + [DeliveryState.queued.rawValue]))
        #expect(Set(counters ?? []) == Set(DeliveryCounter.allCases.map(\.rawValue)))
    }

    @Test func everyAnswerIsDocumented() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let document = try OpenAPIDocument.load()
                var checked = 0
                func check(
                    _ template: String, _ uri: String, _ method: HTTPRequest.Method, headers: HTTPFields = APIFixture.basic("alice"),
                    body: ByteBuffer? = nil
                ) async throws {
                    let response = try await client.execute(uri: uri, method: method, headers: headers, body: body)
                    try document.check(template: template, method: method, response: response)
                    checked += 1
                }
                let json = APIFixture.basic("alice") + [.contentType: "application/json"]
                try await check("/api/register", "/api/register?handle=t", .post)
                let id = try await client.register("alice", handle: "t")
                try await check(
                    "/api/register/{id}", "/api/register/\(id)", .put, headers: json,
                    body: APIFixture.json(["Platform": "apns", "Handle": "t"]))
                try await check(
                    "/api/register/{id}", "/api/register/\(id)", .put, headers: json,
                    body: APIFixture.json(["Platform": "nope", "Handle": "t"]))
                try await check(
                    "/api/register/{id}", "/api/register/\(id)", .put, headers: json,
                    body: APIFixture.json(["Platform": "apns", "Handle": "t", "Environment": "sandbox"]))
                try await check(
                    "/api/register/{id}", "/api/register/\(id)", .put, headers: json,
                    body: APIFixture.json(["Platform": "fcm", "Handle": "t", "Environment": "sandbox"]))
                try await check("/api/notifications", "/api/notifications", .post)
                try await check(
                    "/api/notifications", "/api/notifications", .post, headers: json, body: APIFixture.json(["richType": "video"]))
                try await check(
                    "/api/notifications", "/api/notifications", .post, headers: APIFixture.basic("alice") + [.contentType: "text/csv"],
                    body: ByteBuffer(string: "a"))
                let keyed = json + [HTTPField.Name("Idempotency-Key")!: "doc-1"]
                try await check(
                    "/api/notifications", "/api/notifications", .post, headers: keyed,
                    body: APIFixture.json(["richType": "text", "payload": "a"]))
                try await check(
                    "/api/notifications", "/api/notifications", .post, headers: keyed,
                    body: APIFixture.json(["richType": "text", "payload": "a"]))
                try await check(
                    "/api/notifications", "/api/notifications", .post, headers: keyed,
                    body: APIFixture.json(["richType": "text", "payload": "b"]))
                try await check(
                    "/api/notifications", "/api/notifications?dryRun=true", .post, headers: json,
                    body: APIFixture.json(["richType": "text", "payload": "a"]))
                let batch = APIFixture.json([
                    "notifications": [["richType": "text", "payload": "a", "idempotencyKey": "doc-2"], ["richType": "video"]]
                ])
                try await check("/api/notifications/batch", "/api/notifications/batch", .post, headers: json, body: batch)
                try await check("/api/notifications/batch", "/api/notifications/batch", .post, headers: json, body: batch)
                try await check("/api/notifications/batch", "/api/notifications/batch?dryRun=true", .post, headers: json, body: batch)
                try await check(
                    "/api/notifications/batch", "/api/notifications/batch", .post, headers: json,
                    body: APIFixture.json(["notifications": []]))
                try await check("/api/notifications/batch", "/api/notifications/batch", .post, headers: json, body: ByteBuffer(string: "{"))
                try await check(
                    "/api/notifications/batch", "/api/notifications/batch", .post, headers: APIFixture.basic("alice"), body: batch)
                try await check("/api/notifications", "/api/notifications", .get)
                try await check("/api/notifications", "/api/notifications", .get, headers: [:])
                try await check("/api/notifications/{id}", "/api/notifications/1", .get)
                try await check("/api/notifications/{id}", "/api/notifications/x", .get)
                try await check("/api/notifications/{id}", "/api/notifications/1", .get, headers: APIFixture.basic("bob"))
                try await check("/api/notifications/{id}/status", "/api/notifications/1/status", .get)
                try await check(
                    "/api/notifications/{id}/receipts", "/api/notifications/1/receipts", .post, headers: json,
                    body: APIFixture.json(["kind": "opened"]))
                try await check(
                    "/api/notifications/{id}/receipts", "/api/notifications/1/receipts", .post, headers: json,
                    body: APIFixture.json(["kind": "lost"]))
                try await check("/api/notifications/missed", "/api/notifications/missed?installation=\(id)&after=0", .get)
                try await check("/api/notifications/missed", "/api/notifications/missed?installation=\(id)&limit=0", .get)
                try await check("/api/notifications/missed", "/api/notifications/missed?installation=nobody", .get)
                try await check("/api/register/{id}", "/api/register/\(id)", .delete)
                let hook = APIFixture.json(["url": "https://example.com/hook", "events": ["sent"]])
                try await check("/api/webhooks", "/api/webhooks", .post, headers: json, body: hook)
                try await check(
                    "/api/webhooks", "/api/webhooks", .post, headers: json,
                    body: APIFixture.json(["url": "https://example.com/hook", "events": ["lost"]]))
                try await check("/api/webhooks", "/api/webhooks", .get)
                let webhook = try await client.execute(uri: "/api/webhooks", method: .get, headers: APIFixture.basic("alice")) { response in
                    ((response.json["webhooks"] as? [[String: Any]])?.first?["id"] as? String) ?? ""
                }
                try await check("/api/webhooks/{id}", "/api/webhooks/\(webhook)", .get)
                try await check("/api/webhooks/{id}/attempts", "/api/webhooks/\(webhook)/attempts", .get)
                try await check("/api/webhooks/{id}/dead-letters", "/api/webhooks/\(webhook)/dead-letters", .get)
                try await check("/api/webhooks/{id}/dead-letters/replay", "/api/webhooks/\(webhook)/dead-letters/replay", .post)
                try await check("/api/webhooks/{id}", "/api/webhooks/\(webhook)", .delete)
                try await check("/api/webhooks/{id}", "/api/webhooks/\(webhook)", .get)
                let zeros = String(repeating: "0", count: 64)
                try await check(
                    "/media/{app}/{id}", "/media/default/1?installation=\(id)&expires=99999999999&signature=\(zeros)", .get, headers: [:])
                try await check("/media/{app}/{id}", "/media/default/1", .get, headers: [:])
                try await check("/health/live", "/health/live", .get)
                try await check("/health/ready", "/health/ready", .get)
                try await check("/metrics", "/metrics", .get)
                try await check("/openapi.yaml", "/openapi.yaml", .get)
                try await check("/device", "/device?push=https%3A%2F%2F127.0.0.1%3A8097", .get, headers: [:])
                try await check("/device", "/device?push=https%3A%2F%2F127.0.0.1%2Fpath", .get, headers: [:])
                try await check("/device.js", "/device.js", .get, headers: [:])
                try await check("/device.css", "/device.css", .get, headers: [:])
                #expect(checked == 49)
            }
        }
    }

    @Test func theMethodTableIsTheDocumentsPaths() throws {
        let paths = try #require(try OpenAPIDocument.load().root["paths"] as? [String: Any])
        let methods = ["get", "head", "post", "put", "delete", "patch", "options", "trace"]
        let documented = Dictionary(
            uniqueKeysWithValues: paths.map { path, item in
                (
                    (path.dropFirst()).replacingOccurrences(of: "{id}", with: ":id").replacingOccurrences(of: "{name}", with: ":name")
                        .replacingOccurrences(of: "{app}", with: ":app"),
                    Set(methods.filter { (item as? [String: Any])?[$0] != nil }.map { $0.uppercased() })
                )
            })
        let table = Dictionary(uniqueKeysWithValues: MethodNotAllowedMiddleware.table.map { ($0.path, Set($0.methods.map(\.rawValue))) })
        #expect(table == documented)
    }

    @Test func theServedDocumentIsTheRepositorysFile() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            let served = try await fixture.test { client in try await client.execute(uri: "/openapi.yaml", method: .get).bytes }
            #expect(served == Array(try Data(contentsOf: OpenAPIDocument.url)))
        }
    }
}

/// The parts of openapi.yaml the conformance check reads.
struct OpenAPIDocument {
    static var url: URL {
        // Tests/RichPushAPITests/OpenAPITests.swift → repository root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("openapi.yaml")
    }

    let root: [String: Any]

    static func load() throws -> OpenAPIDocument {
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let root = try Yams.load(yaml: text) as? [String: Any] else { throw DocumentError("openapi.yaml is not a mapping") }
        return OpenAPIDocument(root: root)
    }

    func check(template: String, method: HTTPRequest.Method, response: TestResponse) throws {
        let status = String(response.status.code)
        guard let paths = root["paths"] as? [String: Any], let path = paths[template] as? [String: Any] else {
            throw DocumentError("\(template) is not in openapi.yaml")
        }
        guard let operation = path[method.rawValue.lowercased()] as? [String: Any] else {
            throw DocumentError("\(method) \(template) is not in openapi.yaml")
        }
        guard let responses = operation["responses"] as? [String: Any], let documented = responses[status] as? [String: Any] else {
            throw DocumentError("\(method) \(template) answered \(status), which openapi.yaml does not list")
        }
        let resolved = resolve(documented)
        guard let content = resolved["content"] as? [String: Any] else { return }
        let mediaType = response.headers[.contentType]?.split(separator: ";").first.map(String.init) ?? ""
        guard let media = (content[mediaType] ?? content["*/*"]) as? [String: Any] else {
            throw DocumentError("\(method) \(template) \(status) answered \(mediaType), documented: \(content.keys.sorted())")
        }
        guard mediaType == "application/json", let schema = media["schema"] as? [String: Any] else { return }
        let value = try JSONSerialization.jsonObject(with: Data(buffer: response.body), options: [.fragmentsAllowed])
        try conform(value, to: resolve(schema), at: "\(method) \(template) \(status)")
    }

    private func conform(_ value: Any, to schema: [String: Any], at place: String) throws {
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { throw DocumentError("\(place): expected an object") }
            for field in schema["required"] as? [String] ?? [] where object[field] == nil {
                throw DocumentError("\(place): required field '\(field)' is missing")
            }
            for (name, property) in schema["properties"] as? [String: Any] ?? [:] {
                if let child = object[name], let propertySchema = property as? [String: Any] {
                    try conform(child, to: resolve(propertySchema), at: "\(place).\(name)")
                }
            }
        case "string":
            guard value is String else { throw DocumentError("\(place): expected a string") }
            if let allowed = schema["enum"] as? [String], let text = value as? String, !allowed.contains(text) {
                throw DocumentError("\(place): '\(text)' is not one of \(allowed)")
            }
        case "integer":
            guard value is Int || value is NSNumber else { throw DocumentError("\(place): expected an integer") }
        case "array":
            guard let items = value as? [Any] else { throw DocumentError("\(place): expected an array") }
            if let itemSchema = schema["items"] as? [String: Any] {
                for item in items { try conform(item, to: resolve(itemSchema), at: "\(place)[]") }
            }
        default:
            break
        }
    }

    private func resolve(_ node: [String: Any]) -> [String: Any] {
        guard let reference = node["$ref"] as? String else { return node }
        var current: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            current = (current as? [String: Any])?[String(part)] ?? [:]
        }
        return resolve(current as? [String: Any] ?? [:])
    }
}

struct DocumentError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
