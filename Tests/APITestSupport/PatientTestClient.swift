import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1

@testable import HummingbirdTesting

/// HummingbirdTesting's client for a live server gives up on a request after 20 s, a limit it does
/// not let a test change. With every suite of the package running at once on 2 cores, the API of
/// one test can take longer than that to answer (readTimeout in a dozen API tests at once, in 4 of
/// 6 runs of scripts/test.sh on 2026-12-06): a client with the same contract and two minutes'
/// patience. Like Hummingbird's, it names the authority `localhost` and follows no redirect.
///
/// Its connections are ``TestHTTP/client``'s (closed after 5 s idle, before the server's 30 s).
struct PatientTestClient: TestClientProtocol {
    static var http: HTTPClient { TestHTTP.client }
    static let patience: TimeAmount = .seconds(120)

    let port: Int?

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port ?? 0)\(uri.hasPrefix("/") ? uri : "/" + uri)")
        request.method = HTTPMethod(rawValue: method.rawValue)
        if !headers.contains(where: { $0.name.canonicalName == "host" }) { request.headers.add(name: "Host", value: "localhost") }
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        if let body { request.body = .bytes(body) }
        let response = try await Self.http.execute(request, deadline: .now() + Self.patience)
        var fields = HTTPFields()
        for header in response.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        let collected = try await response.body.collect(upTo: .max)
        return TestResponse(
            head: HTTPResponse(
                status: .init(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase), headerFields: fields),
            body: collected, trailerHeaders: nil)
    }
}
