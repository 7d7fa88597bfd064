import Crypto
import Foundation
import PlatformSimTestSupport
import RichPushAPNS
import RichPushAPNSSim
import RichPushCore
import Testing

/// The simulator's checks refuse what Apple refuses, and accept what the adapter builds.
@Suite("apns-sim refuses what Apple refuses")
struct APNSServerRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// What the adapter would send for a silent push, with `change` applied.
    static func request(token: String? = nil, _ change: (inout APNSIncomingRequest) -> Void = { _ in }) throws -> APNSIncomingRequest {
        let push = OutgoingPush(
            notification: 42,
            installation: Installation(
                id: "i1", platform: .apns, handle: String(repeating: "ab", count: 32), tags: [], owner: "alice", updatedAt: 0),
            rendered: RenderedPush(
                payload: Array(#"{"aps":{"content-available":1},"richId":"42"}"#.utf8), pushType: "background",
                priority: 5, expiration: 1_800_086_400, collapseID: "42"))
        let built = try APNSRequest(push: push, topic: "com.example.richpush")
        let bearer = try token ?? LocalAPNS.signer().token(issuedAt: now.addingTimeInterval(-60))
        var request = APNSIncomingRequest(
            method: "POST", path: built.path,
            headers: [("authorization", "bearer \(bearer)")] + built.headers.map { ($0.name, $0.value) }, body: built.body)
        change(&request)
        return request
    }

    static func header(_ name: String, _ value: String?) -> (inout APNSIncomingRequest) -> Void {
        { request in
            request.headers.removeAll { $0.name == name }
            if let value { request.headers.append((name, value)) }
        }
    }

    @Test func whatTheAdapterBuildsIsAccepted() throws {
        let verdict = try LocalAPNS.rules().verdict(try Self.request(), now: Self.now)
        #expect(verdict == .accepted(apnsID: APNSID.make(notification: 42, installation: "i1")))
    }

    @Test func badTokensAreRefusedWithApplesReasons() throws {
        let rules = try LocalAPNS.rules()
        let other = P256.Signing.PrivateKey().pemRepresentation
        let cases: [(String?, APNSReason)] = [
            (try LocalAPNS.signer(other).token(issuedAt: Self.now), .invalidProviderToken),  // wrong key
            (try LocalAPNS.signer(keyID: "ZZZ123DEFG").token(issuedAt: Self.now), .invalidProviderToken),  // unknown key id
            (try LocalAPNS.signer(teamID: "OTHERTEAM1").token(issuedAt: Self.now), .invalidProviderToken),  // another team
            (try LocalAPNS.signer().token(issuedAt: Self.now.addingTimeInterval(-3700)), .expiredProviderToken),  // over an hour old
            ("not.a.jwt", .invalidProviderToken),
        ]
        for (token, reason) in cases {
            #expect(rules.verdict(try Self.request(token: token), now: Self.now) == .refused(status: 403, reason: reason))
        }
        #expect(
            rules.verdict(try Self.request(Self.header("authorization", nil)), now: Self.now)
                == .refused(status: 403, reason: .missingProviderToken))
    }

    @Test func badRequestsAreRefusedWithApplesStatusAndReason() throws {
        let rules = try LocalAPNS.rules()
        let big = Array((#"{"aps":{"content-available":1},"pad":""# + String(repeating: "x", count: 5000) + #""}"#).utf8)
        let cases: [((inout APNSIncomingRequest) -> Void, Int, APNSReason)] = [
            ({ $0.method = "GET" }, 405, .methodNotAllowed),
            ({ $0.path = "/3/devices/abab" }, 404, .badPath),
            ({ $0.path = "/3/device/" }, 400, .missingDeviceToken),
            ({ $0.path = "/3/device/xyz1" }, 400, .badDeviceToken),
            ({ $0.headers.append(("apns-topic", "com.example.richpush")) }, 400, .duplicateHeaders),
            (Self.header("apns-topic", nil), 400, .missingTopic),
            (Self.header("apns-topic", "com.other.app"), 400, .topicDisallowed),
            (Self.header("apns-push-type", "sms"), 400, .invalidPushType),
            (Self.header("apns-priority", "10"), 400, .badPriority),
            (Self.header("apns-priority", "7"), 400, .badPriority),
            (Self.header("apns-expiration", "soon"), 400, .badExpirationDate),
            (Self.header("apns-collapse-id", String(repeating: "c", count: 65)), 400, .badCollapseID),
            (Self.header("apns-id", "not-a-uuid"), 400, .badMessageID),
            ({ $0.body = [] }, 400, .payloadEmpty),
            ({ $0.body = big }, 413, .payloadTooLarge),
            ({ $0.body = Array(#"{"aps":{"content-available":true}}"#.utf8) }, 400, .invalidPushType),
            ({ $0.body = Array(#"{"aps":{"content-available":1,"sound":""}}"#.utf8) }, 400, .invalidPushType),
        ]
        for (change, status, reason) in cases {
            #expect(
                rules.verdict(try Self.request(change), now: Self.now) == .refused(status: status, reason: reason),
                "expected \(status) \(reason.rawValue)")
        }
    }
}
