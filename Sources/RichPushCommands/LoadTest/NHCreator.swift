import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import RichPushCore
package import RichPushNH
import Synchronization

/// Through the Notification Hubs listener (`--via nh`, `--via nh-batch`), as code written for NH
/// sends: each notification is the tutorial's silent push (without its `"sound": ""`, which a background push may not carry), an `apple` native send signed with the
/// hub's connection string over TLS; `nh` sends it to the device's tag (`POST /{hub}/messages`),
/// `nh-batch` as a batch direct send to every device's handle (`messages/$batch?direct`). An NH
/// sender numbers its notifications itself (the tutorial's backend keeps them): the payload's
/// `richId` is the load test's own number, which the devices report and the tracker counts. A 503
/// or 429 is sent again after its `Retry-After`; anything else that is not 201 fails the run.
package final class NHCreator: NotificationCreator {
    private let client: HTTPClient
    private let url: String
    private let authorization: String
    /// A batch direct send's `devices` part and the close after it (every device's handle), made
    /// once; nil: sends to each notification's tag.
    private let devicesPart: String?
    private let unavailable = Atomic<Int>(0)

    /// `handles`: nil sends to each notification's tag; else a batch direct send to these.
    package init(connectionString: NHConnectionString, hub: String, caFile: String?, handles: [String]?, connections: Int) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
        client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                tlsConfiguration: tls, timeout: .init(connect: .seconds(30)),
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)))
        let base = connectionString.httpsEndpoint.hasSuffix("/") ? connectionString.httpsEndpoint : connectionString.httpsEndpoint + "/"
        url = base + hub + (handles == nil ? "/messages" : "/messages/$batch?direct")
        // One token for the run, as the SDKs cache theirs: valid for a day.
        authorization = SharedAccessSignature.header(
            resourceURI: base + hub, keyName: connectionString.keyName, key: connectionString.key,
            expiry: Int64(Date().timeIntervalSince1970) + 86400)
        devicesPart = handles.map { handles in
            "\r\n--\(Self.boundary)\r\nContent-type: application/json\r\nContent-Disposition: inline; name=devices\r\n\r\n"
                + Self.json(handles) + "\r\n--\(Self.boundary)--"
        }
    }

    static let boundary = "nh-batch-multipart-boundary"

    /// `strings` as a JSON array.
    static func json(_ strings: [String]) -> String {
        var json = JSONWriter(capacity: strings.reduce(2) { $0 + $1.utf8.count + 3 })
        json.value(.array(strings.map(JSONValue.string)))
        return String(decoding: json.bytes, as: UTF8.self)
    }

    package var retried: Int { unavailable.load(ordering: .relaxed) }

    package func create(index: Int, target: String) async throws -> Int {
        let richID = index + 1
        let push = #"{"aps":{"content-available":1},"richId":"\#(richID)","richMessage":"load \#(index)","richType":"img"}"#
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "ServiceBusNotification-Format", value: "apple")
        if let devicesPart {
            request.headers.add(name: "Content-Type", value: #"multipart/mixed; boundary = "\#(Self.boundary)""#)
            request.body = .bytes(
                ByteBuffer(
                    string: "--\(Self.boundary)\r\nContent-type: application/json;charset=utf-8\r\n"
                        + "Content-Disposition: inline; name=notification\r\n\r\n\(push)" + devicesPart))
        } else {
            request.headers.add(name: "ServiceBusNotification-Tags", value: target)
            request.headers.add(name: "Content-Type", value: "application/json;charset=utf-8")
            request.body = .bytes(ByteBuffer(string: push))
        }
        while true {
            let response = try await client.execute(request, timeout: .seconds(30))
            let answer = try await response.body.collect(upTo: 64 * 1024)
            switch response.status.code {
            case 201:
                return richID
            case 429, 503:
                unavailable.add(1, ordering: .relaxed)
                let wait = response.headers.first(name: "Retry-After").flatMap(Double.init) ?? 1
                try await Task.sleep(for: .milliseconds(Int(min(max(wait, 0.05), 30) * 1000)))
            default:
                throw CLIError("POST \(url) answered \(response.status.code): \(String(buffer: answer).prefix(300))")
            }
        }
    }

    package func shutdown() async {
        try? await client.shutdown()
    }
}
