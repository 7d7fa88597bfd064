import Foundation
import RichPushAPNS
import RichPushCore
import Testing

@Suite("APNs requests and Apple's rules")
struct APNSRequestTests {
    static let token = String(repeating: "ab", count: 32)

    static func push(
        payload: String, pushType: String = "background", priority: Int = 5, collapseID: String = "42",
        token: String = token, expiration: Int = 1_800_000_000
    ) -> OutgoingPush {
        OutgoingPush(
            notification: 42,
            installation: Installation(id: "inst-1", platform: .apns, handle: token, tags: [], owner: "alice", updatedAt: 0),
            rendered: RenderedPush(
                payload: Array(payload.utf8), pushType: pushType, priority: priority, expiration: expiration, collapseID: collapseID))
    }

    static let silent = #"{"aps":{"content-available":1},"richId":"42","richMessage":"hi","richType":"img"}"#

    @Test func aSilentPushHasAppleHeadersInOrder() throws {
        let request = try APNSRequest(push: Self.push(payload: Self.silent), topic: "com.example.richpush")
        #expect(request.path == "/3/device/\(Self.token)")
        let headers = Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, $0.value) })
        #expect(headers["apns-push-type"] == "background" && headers["apns-priority"] == "5")
        #expect(headers["apns-topic"] == "com.example.richpush" && headers["apns-expiration"] == "1800000000")
        #expect(headers["apns-collapse-id"] == "42" && headers["apns-id"] == request.apnsID)
        #expect(request.body == Array(Self.silent.utf8))
    }

    @Test func theAPNSIDIsALowercaseUUIDStableForAPair() throws {
        let id = APNSID.make(notification: 42, installation: "inst-1")
        #expect(id == APNSID.make(notification: 42, installation: "inst-1"))
        #expect(id != APNSID.make(notification: 43, installation: "inst-1"))
        #expect(UUID(uuidString: id) != nil && id == id.lowercased())
        #expect(Array(id)[14] == "8")  // version 8
        #expect(id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
    }

    @Test(arguments: [
        (#"{"aps":{"content-available":1},"x":1}"#, "background", 10, "42", APNSReason.badPriority),
        (#"{"aps":{"content-available":true}}"#, "background", 5, "42", .invalidPayload),
        (#"{"aps":{"content-available":1,"sound":""}}"#, "background", 5, "42", .invalidPayload),
        (#"{"aps":{"content-available":1,"alert":"hi"}}"#, "background", 5, "42", .invalidPayload),
        (#"{"aps":{}}"#, "background", 5, "42", .invalidPayload),
        (#"{"richId":"42"}"#, "background", 5, "42", .invalidPayload),
        (#"[1,2]"#, "background", 5, "42", .invalidPayload),
        (#"{"aps":{"mutable-content":1}}"#, "alert", 10, "42", .invalidPayload),
        (#"{"aps":{"content-available":1}}"#, "voip", 10, "42", .invalidPushType),
        (#"{"aps":{"content-available":1}}"#, "background", 5, String(repeating: "c", count: 65), .badCollapseID),
        ("", "background", 5, "42", .payloadEmpty),
    ])
    func whatAppleWouldRefuseIsNeverSent(payload: String, pushType: String, priority: Int, collapseID: String, reason: APNSReason) {
        #expect {
            _ = try APNSRequest(
                push: Self.push(payload: payload, pushType: pushType, priority: priority, collapseID: collapseID),
                topic: "com.example.richpush")
        } throws: { ($0 as? APNSRejection)?.reason == reason }
    }

    @Test func sizesTokensAndTopicsAreChecked() {
        let big = #"{"aps":{"content-available":1},"pad":""# + String(repeating: "x", count: 4100) + #""}"#
        #expect { _ = try APNSRequest(push: Self.push(payload: big), topic: "t") } throws: {
            ($0 as? APNSRejection)?.reason == .payloadTooLarge
        }
        for token in ["abc", "zz" + String(repeating: "ab", count: 31), ""] {
            #expect { _ = try APNSRequest(push: Self.push(payload: Self.silent, token: token), topic: "t") } throws: {
                ($0 as? APNSRejection)?.reason == .badDeviceToken
            }
        }
        #expect { _ = try APNSRequest(push: Self.push(payload: Self.silent), topic: "") } throws: {
            ($0 as? APNSRejection)?.reason == .missingTopic
        }
        let alert = #"{"aps":{"alert":{"body":"hi"},"mutable-content":1}}"#
        #expect((try? APNSRequest(push: Self.push(payload: alert, pushType: "alert", priority: 10), topic: "t")) != nil)
    }
}
