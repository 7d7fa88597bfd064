import Testing

@testable import Hiredis

@Suite("Redis URL parsing")
struct ConfigurationTests {
    @Test func fullURL() throws {
        let configuration = try RedisConfiguration(url: "redis://alice:s%40cret@redis.example:6380/3?name=api")
        #expect(configuration.host == "redis.example")
        #expect(configuration.port == 6380)
        #expect(configuration.username == "alice")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == 3)
        #expect(configuration.clientName == "api")
    }

    @Test func defaultsAndPasswordOnlyForms() throws {
        let plain = try RedisConfiguration(url: "redis://localhost")
        #expect(plain.port == 6379 && plain.database == 0 && plain.username == nil && plain.password == nil)
        let colon = try RedisConfiguration(url: "redis://:pw@localhost:7000")
        #expect(colon.username == nil && colon.password == "pw" && colon.port == 7000)
        let short = try RedisConfiguration(url: "redis://pw@localhost")
        #expect(short.username == nil && short.password == "pw")
    }

    @Test(arguments: [
        ("http://localhost", "unsupported scheme"),
        ("rediss://localhost", "TLS"),
        ("redis://", "missing host"),
        ("redis://localhost/abc", "database 'abc'"),
        ("redis://localhost:70000", "out of range"),
        ("redis://localhost?timeout=3", "unknown option 'timeout'"),
        ("not a url", "expected redis://"),
    ])
    func badURLsSayWhatIsWrong(url: String, expected: String) {
        #expect {
            _ = try RedisConfiguration(url: url)
        } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .invalidURL && error.message.contains(expected)
        }
    }

    @Test func credentialsNeverShowInErrorsOrLogs() throws {
        let configuration = try RedisConfiguration(url: "redis://admin:topsecret@localhost:6379/1")
        #expect(configuration.redactedURL == "redis://***@localhost:6379/1")
        do {
            _ = try RedisConfiguration(url: "redis://admin:topsecret@localhost/x")
            Issue.record("a bad database should throw")
        } catch {
            #expect(!error.message.contains("topsecret"))
        }
    }
}
