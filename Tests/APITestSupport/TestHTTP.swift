package import AsyncHTTPClient

/// The HTTP client of the tests that call a live API over loopback. A connection idle in its
/// pool for 5 s is closed by the client: the API closes one idle for its idle timeout (30 s), and
/// a request sent on it at that moment fails with `remoteConnectionClosed` or a reset (a PATCH after
/// a 30 s stall of the machine; MissedPushesTests' GET after 85 s of waits beside the whole suite,
/// 2026-12-07). `HTTPClient.shared` keeps idle connections 60 s, past the API's 30. A request
/// waits for a connection of the pool as long as the connect timeout, 120 s: with 40 requests at
/// once on a busy machine, AsyncHTTPClient's default of 10 s runs out.
package enum TestHTTP {
    package static let client = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(120)), connectionPool: .init(idleTimeout: .seconds(5)), decompression: .disabled))
}
