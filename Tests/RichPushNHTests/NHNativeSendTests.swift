import RichPushAPNS
import RichPushCore
import Testing

@testable import RichPushNH

@Suite("NH native sends")
struct NHNativeSendTests {
    static func push(_ format: String, _ body: String, _ headers: [(String, String)] = []) throws -> NativePush {
        try NHNativeSend.push(
            format: format, body: Array(body.utf8), headers: headers.map { (name: $0.0, value: $0.1) },
            apnsPayloadProblem: APNSPayloadCheck.problem)
    }

    @Test func appleWithItsHeaders() throws {
        let push = try Self.push(
            "apple", #"{"aps":{"content-available":1},"richId":"7"}"#,
            [("apns-priority", "5"), ("Content-Type", "application/json"), ("apns-collapse-id", "c1")])
        #expect(push.format == .apns && push.headers == ["apns-priority": "5", "apns-collapse-id": "c1"])
        let plain = RenderedPush(payload: [], pushType: "alert", priority: 10, expiration: 0, collapseID: "9")
        let sent = try push.push(over: plain, now: 0).get()
        #expect(sent.pushType == "background" && sent.priority == 5 && sent.collapseID == "c1")
        #expect(String(decoding: sent.payload, as: UTF8.self) == #"{"aps":{"content-available":1},"richId":"7"}"#, "sent as written")
        let alert = try Self.push("apple", #"{"aps":{"alert":"Hi"}}"#).push(over: plain, now: 0).get()
        #expect(alert.pushType == "alert" && alert.priority == 10)
    }

    @Test func fcmV1IsItsMessageWithoutATarget() throws {
        let push = try Self.push("fcmv1", #"{"message":{"data":{"richId":"7"},"android":{"priority":"HIGH"}}}"#)
        #expect(push.format == .fcm && push.body == #"{"android":{"priority":"HIGH"},"data":{"richId":"7"}}"#)
        let bare = try Self.push("fcmv1", #"{"data":{"richId":"7"},"android":{"priority":"HIGH"}}"#)
        #expect(bare == push, "the message alone, as the Node SDK's Python port sends it")
    }

    @Test func aBrowserPayloadIsSentAsWritten() throws {
        let push = try Self.push("browser", #"{"title":"Hi","richId":"7"}"#)
        #expect(push.format == .webpush && push.body == #"{"title":"Hi","richId":"7"}"#)
    }

    @Test func storedAndReadBack() throws {
        let push = try Self.push("apple", #"{"aps":{"alert":"é \"q\""}}"#, [("apns-push-type", "alert")])
        #expect(NativePush(json: push.json) == push)
        #expect(NativePush(json: Array(#"{"format":"apns"}"#.utf8)) == nil)
    }

    @Test(
        arguments: [
            ("gcm", "{}", [], "Google closed it in 2024"),
            ("windows", "<toast/>", [], "not served"),
            ("apple", "[1]", [], "an 'aps' object"),
            ("apple", #"{"alert":"x"}"#, [], "an 'aps' object"),
            ("apple", #"{"aps":{}}"#, [("apns-topic", "com.other")], "cannot be set on apns"),
            ("apple", #"{"aps":{}}"#, [("apns-priority", "7")], "is 5 or 10"),
            ("apple", #"{"aps":{"content-available":1}}"#, [("apns-priority", "10")], "background needs apns-priority 5"),
            ("apple", #"{"aps":{"alert":""#, [], "an 'aps' object"),
            // The tutorial's silent push as written: APNs' adapter would refuse every push of it after the 201.
            ("apple", #"{"aps":{"content-available":1,"sound":""},"richId":"42"}"#, [], #"must not carry "sound""#),
            ("apple", #"{"aps":{"badge":1}}"#, [], #"needs "content-available": 1"#),
            ("apple", #"{"aps":{"content-available":1}}"#, [("apns-push-type", "alert"), ("apns-priority", "10")], #"needs an "alert""#),
            ("fcmv1", "[]", [], "{\"message\": {…}}"),
            ("fcmv1", #"{"message":{"data":{}},"extra":1}"#, [], "no field 'extra'"),
            ("fcmv1", #"{"message":{"token":"t","data":{}}}"#, [], "names no 'token'"),
            ("fcmv1", #"{"message":{"topic":"news"}}"#, [], "names no 'topic'"),
            ("apple", #"{"aps":{"alert":"\#(String(repeating: "x", count: 4100))"}}"#, [], "takes at most 4096"),
        ] as [(String, String, [(String, String)], String)])
    func refusals(format: String, body: String, headers: [(String, String)], words: String) {
        #expect {
            _ = try Self.push(format, body, headers)
        } throws: { error in
            guard let error = error as? NHError else { return false }
            return error.status == 400 && error.message.contains(words)
        }
    }

    @Test(
        arguments: [
            ("2026-12-24T18:00:00Z", 1_798_135_200_000), ("2026-12-24'T'18:00:00", 1_798_135_200_000),
            ("2026-12-24T18:00:00", 1_798_135_200_000), ("2026-12-24T18:00:00.5+00:00", 1_798_135_200_500),
            ("2026-12-24T19:30:00.123456+01:30", 1_798_135_200_123), ("2026-12-24T16:00:00-02:00", 1_798_135_200_000),
            ("1970-01-01T00:00:00Z", 0), ("2000-02-29T00:00:00Z", 951_782_400_000), ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ] as [(String, Int64)])
    func scheduleTimes(header: String, milliseconds: Int64) throws {
        #expect(try NHScheduleTime.milliseconds(header) == milliseconds)
    }

    @Test(arguments: [
        "", "tomorrow", "2026-12-24", "2026-13-01T00:00:00Z", "2026-12-24T18:00:00+0100", "2026-12-24T18:00:00Zjunk",
        // Days that do not exist, a 60th second, year 0: .NET's DateTime (NH's) reads none of them.
        "2025-02-29T10:00:00Z", "2025-04-31T10:00:00Z", "2024-02-30T00:00:00Z", "2026-12-24T18:00:60Z", "0000-01-01T00:00:00Z",
    ])
    func badScheduleTimes(header: String) {
        #expect(throws: NHError.self) { try NHScheduleTime.milliseconds(header) }
    }
}
