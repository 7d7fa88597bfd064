import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import RedisTestSupport
import Testing

@testable import RichPushAPI

/// `--trusted-proxies`: only a trusted peer's `X-Forwarded-For` names the client, and then its
/// right-most address that is not itself a trusted proxy; the login limits count that client.
@Suite("Client address")
struct ClientAddressTests {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    @Test func rangesParseInBothFamiliesAndBadOnesAreNamed() throws {
        let proxies = try TrustedProxies(parsing: " 10.0.0.0/8, fd00::/8 ,192.0.2.7,::ffff:203.0.113.0/120,")
        #expect(proxies.ranges.map(\.description) == ["10.0.0.0/8", "fd00::/8", "192.0.2.7/32", "203.0.113.0/24"])
        for address in ["10.1.2.3", "::ffff:10.9.9.9", "fd12::1", "192.0.2.7", "203.0.113.200"] {
            #expect(proxies.trusts(try #require(IPAddress(address))), "\(address)")
        }
        for address in ["11.0.0.1", "fe80::1", "192.0.2.8", "::1"] {
            #expect(!proxies.trusts(try #require(IPAddress(address))), "\(address)")
        }
        #expect(CIDR("10.1.2.3/8")?.description == "10.0.0.0/8")
        #expect(CIDR("0.0.0.0/0")?.contains(try #require(IPAddress("198.51.100.1"))) == true)
        #expect(CIDR("0.0.0.0/0")?.contains(try #require(IPAddress("2001:db8::1"))) == false)
        #expect(CIDR("::/0")?.contains(try #require(IPAddress("2001:db8::1"))) == true)
        for bad in [
            "10.0.0.0/33", "fd00::/129", "10.0.0/8", "proxy.example", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/", "/8", "10.0.0.0/8/8",
            "1.2.3.4:80",
        ] {
            #expect(throws: TrustedProxies.ParseError.self, "\(bad)") { try TrustedProxies(parsing: "10.0.0.0/8,\(bad)") }
        }
        #expect(try TrustedProxies(parsing: "").isEmpty)
    }

    @Test func theClientIsTheRightMostAddressThatIsNotATrustedProxy() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8,fd00::/8")
        // From an untrusted peer the header is ignored, whatever it says.
        #expect(proxies.client(peer: "198.51.100.9", forwardedFor: ["10.0.0.1, 203.0.113.5"]) == "198.51.100.9")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["203.0.113.5"]) == "203.0.113.5")
        // What the client wrote left of the first untrusted hop is not believed.
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, 203.0.113.5, 10.0.0.7"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["1.1.1.1", "203.0.113.5,10.0.0.7"]) == "203.0.113.5")
        // Ports and brackets as some proxies write them; one spelling per address.
        #expect(proxies.client(peer: "::ffff:10.0.0.2", forwardedFor: ["203.0.113.5:4711"]) == "203.0.113.5")
        #expect(proxies.client(peer: "fd00::2", forwardedFor: ["[2001:DB8:0:0::1]:443"]) == "2001:db8::1")
        #expect(proxies.client(peer: "fd00::2", forwardedFor: ["2001:db8::0:1"]) == "2001:db8::1")
        // Every hop a trusted proxy: the left-most; garbage: the last address known.
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["10.0.0.3, 10.0.0.4"]) == "10.0.0.3")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["203.0.113.5, unknown"]) == "10.0.0.2")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["203.0.113.5, 10.0.0.4, _hidden"]) == "10.0.0.2")
    }

    /// Two failed logins from one client, then it waits; the test client's peer is 127.0.0.1.
    static func fixture(_ server: RedisServer, trusting ranges: String) async throws -> APIFixture {
        let proxies = try TrustedProxies(parsing: ranges)
        return try await APIFixture(server: server) {
            $0.auth.throttle.freeFailuresPerAddress = 2
            $0.auth.throttle.firstDelay = .seconds(60)
            $0.trustedProxies = proxies
        }
    }

    /// A failed login of a new user name (so only the per-address limit counts) from the client
    /// `forwarded` names.
    static func guess(_ client: any TestClientProtocol, _ number: Int, forwarded: String) async throws -> HTTPResponse.Status {
        try await client.execute(
            uri: "/api/notifications", method: .get,
            headers: APIFixture.basic("guesser\(number)", "wrong") + [forwardedFor: forwarded]
        ) { $0.status }
    }

    @Test func behindATrustedProxyEachClientIsLimitedOnItsOwn() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server, trusting: "127.0.0.0/8,::1")
            try await fixture.test { client in
                #expect(try await Self.guess(client, 1, forwarded: "198.51.100.1") == .unauthorized)
                #expect(try await Self.guess(client, 2, forwarded: "198.51.100.1") == .unauthorized)
                #expect(try await Self.guess(client, 3, forwarded: "198.51.100.1") == .tooManyRequests)
                // Another client behind the same proxy is not slowed by the first one's failures.
                #expect(try await Self.guess(client, 4, forwarded: "198.51.100.2") == .unauthorized)
                // A client writing another address in front of its own gains nothing.
                #expect(try await Self.guess(client, 5, forwarded: "203.0.113.77, 198.51.100.1") == .tooManyRequests)
                try await client.execute(
                    uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice") + [Self.forwardedFor: "198.51.100.3"]
                ) {
                    #expect($0.status == .ok)
                }
            }
        }
    }

    @Test func fromAnUntrustedPeerXForwardedForIsIgnored() async throws {
        try await withRedisServer { server in
            let fixture = try await Self.fixture(server, trusting: "10.0.0.0/8")
            try await fixture.test { client in
                var statuses: [HTTPResponse.Status] = []
                // A new address in the header each time does not escape the peer's limit.
                for number in 1...5 {
                    statuses.append(try await Self.guess(client, number, forwarded: "198.51.100.\(number)"))
                }
                #expect(statuses == [.unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests, .tooManyRequests])
            }
        }
    }

    @Test func aBadRangeStopsTheAPIAtStartWithItsName() async throws {
        let richpush = try richpushExecutable().path
        let (status, output) = try await runTool(
            richpush, ["api", "--trusted-proxies", "10.0.0.0/8,10.0.0.0/33", "--redis-url", "redis://127.0.0.1:1"])
        #expect(status != 0, "\(output)")
        #expect(
            output.contains("--trusted-proxies") && output.contains("'10.0.0.0/33' is not an IPv4 or IPv6 address or CIDR range"),
            "\(output)")
        let (envStatus, envOutput) = try await runTool(
            "/usr/bin/env", ["RICHPUSH_TRUSTED_PROXIES=lb.internal", richpush, "api", "--redis-url", "redis://127.0.0.1:1"])
        #expect(envStatus != 0 && envOutput.contains("'lb.internal' is not"), "\(envOutput)")
        let (_, help) = try await runTool(richpush, ["api", "--help"])
        #expect(
            help.contains("--trusted-proxies") && help.contains("RICHPUSH_TRUSTED_PROXIES") && help.contains("X-Forwarded-For"), "\(help)")
    }
}
