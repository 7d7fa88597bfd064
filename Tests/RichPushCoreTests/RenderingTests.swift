import Foundation
import RichPushCore
import Testing

@Suite("Rendering")
struct RenderingTests {
    static let messages = [
        "Check this image out!",
        "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul \u{00}",
        "unicode: ünïcødé 🚀 日本語",
        "",
    ]

    static func notification(_ message: String, type: RichType = .image) -> RichNotification {
        RichNotification(
            id: 42, message: message, richType: type, contentType: "image/png", payloadHash: "h",
            payloadSize: 3, creator: "alice", target: "username:alice", createdAt: 0)
    }

    /// The hand-written writer must produce what Foundation's sorted-key encoder does, byte for byte.
    @Test(arguments: messages, PushRenderer.Mode.allCases)
    func payloadMatchesFoundation(message: String, mode: PushRenderer.Mode) throws {
        let renderer = PushRenderer(mode: mode, apiBaseURL: "http://api.example/x")
        let rendered = try renderer.render(Self.notification(message), collapseID: "1-0")
        // auto, with no device's choice, renders its silent form.
        let aps: [String: Any] =
            mode != .alert
            ? ["content-available": 1]
            : ["alert": ["body": message], "mutable-content": 1, "category": "richPush"]
        var root: [String: Any] = ["aps": aps, "richId": "42", "richMessage": message, "richType": "img"]
        if mode == .alert { root["richUrl"] = "http://api.example/x/api/notifications/42" }
        let expected = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(rendered.payload)) as? [String: Any])
        #expect(parsed["richMessage"] as? String == message)
        #expect(String(decoding: rendered.payload, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func silentPushHasTheSeedKeysAndAPNsMetadata() throws {
        let rendered = try PushRenderer().render(
            Self.notification("hi"), collapseID: "1700000000000-0", now: Date(timeIntervalSince1970: 1000))
        #expect(
            String(decoding: rendered.payload, as: UTF8.self)
                == #"{"aps":{"content-available":1},"richId":"42","richMessage":"hi","richType":"img"}"#)
        #expect(rendered.pushType == "background")
        #expect(rendered.priority == 5)
        #expect(rendered.expiration == 1000 + 86400)
        #expect(rendered.collapseID == "1700000000000-0")
    }

    /// A notification's own `delivery` wins over the workers' push mode, on every platform: an
    /// alert asked of a silent renderer is shown (APNs alert with the fetch URL, priority 10; FCM
    /// a notification message; Web Push with `richUrl`), a silent one asked of an alert renderer
    /// is a background push (priority 5, no alert), and a notification that asks nothing gets the
    /// renderer's mode.
    @Test(arguments: PushRenderer.Mode.allCases)
    func aNotificationsDeliveryWinsOverTheWorkersMode(workers: PushRenderer.Mode) throws {
        let asked: PushRenderer.Mode = workers == .silent ? .alert : .silent
        var notification = Self.notification("hi")
        let renderer = PushRenderer(mode: workers, apiBaseURL: "http://api.example")
        #expect(renderer.mode(for: notification) == workers)
        notification.delivery.mode = asked
        #expect(renderer.mode(for: notification) == asked)
        let apns = try renderer.render(notification, collapseID: "1")
        let aps = try #require(
            (try JSONSerialization.jsonObject(with: Data(apns.payload)) as? [String: Any])?["aps"] as? [String: Any])
        let fcm = String(decoding: try renderer.renderFCM(notification, collapseID: "1").payload, as: UTF8.self)
        let web = String(decoding: try renderer.renderWebPush(notification).payload, as: UTF8.self)
        if asked == .alert {
            #expect(aps["mutable-content"] as? Int == 1 && aps["alert"] != nil && aps["content-available"] == nil)
            #expect(apns.pushType == "alert" && apns.priority == 10)
            #expect(fcm.contains(#""notification""#) && fcm.contains("richUrl"), "\(fcm)")
            #expect(web.contains("richUrl"), "\(web)")
        } else {
            #expect(aps["content-available"] as? Int == 1 && aps["alert"] == nil)
            #expect(apns.pushType == "background" && apns.priority == 5)
            #expect(!fcm.contains(#""notification""#) && !fcm.contains("richUrl"), "\(fcm)")
            #expect(!web.contains("richUrl"), "\(web)")
        }
    }

    /// `apns-expiration` is whole seconds: the deadline (creation + ttl, to the millisecond)
    /// rounded up, never down, so APNs never gives up before it. (Rounded down twice, a push
    /// created half-way through a second with ttl 3 expired after 1.9 s.)
    @Test(arguments: [
        (created: Int64(1_800_000_000_500), ttl: 3, expiration: 1_800_000_004),
        (created: 1_800_000_000_001, ttl: 1, expiration: 1_800_000_002),
        (created: 1_800_000_000_999, ttl: 4, expiration: 1_800_000_005),
        (created: 1_800_000_000_000, ttl: 4, expiration: 1_800_000_004),
    ])
    func theExpirationIsTheDeadlineRoundedUp(created: Int64, ttl: Int64, expiration: Int) throws {
        var notification = Self.notification("hi")
        notification.createdAt = created
        notification.delivery.ttl = .seconds(ttl)
        // Rendered a little after creation, as a worker does, and late (a retry): the same deadline.
        for delay in [0.05, 0.7] {
            let now = Date(timeIntervalSince1970: Double(created) / 1000 + delay)
            let rendered = try PushRenderer().render(notification, collapseID: "42", now: now)
            #expect(rendered.deadline == created + ttl * 1000)
            #expect(rendered.expiration == expiration)
            let off = PushRenderer().lifetime(of: notification, now: now) - (.seconds(ttl) - .seconds(delay))
            #expect(off >= .milliseconds(-1) && off <= .milliseconds(1), "lifetime off by \(off)")
        }
        #expect(
            PushRenderer.seconds(roundingUp: 1_000) == 1 && PushRenderer.seconds(roundingUp: 1_001) == 2
                && PushRenderer.seconds(roundingUp: 0) == 0)
    }

    /// Without a ttl the renderer's time to live counts from now, also to the millisecond.
    @Test func withoutATTLTheTimeToLiveCountsFromNowRoundedUp() throws {
        let rendered = try PushRenderer(timeToLive: .seconds(60)).render(
            Self.notification("hi"), collapseID: "42", now: Date(timeIntervalSince1970: 1000.25))
        #expect(rendered.deadline == 1_060_250)
        #expect(rendered.expiration == 1061)
    }

    @Test func oversizedPayloadIsAPermanentErrorNamingTheLimit() {
        let long = String(repeating: "é", count: 2100)  // 4200 bytes of UTF-8
        #expect {
            _ = try PushRenderer().render(Self.notification(long), collapseID: "1-0")
        } throws: { error in
            (error as? RenderError)?.message.contains("at most 4096") == true
        }
    }

    @Test func writerNestsObjectsAndSeparatesFields() {
        var json = JSONWriter()
        json.beginObject()
        json.field("a", 1)
        json.key("b")
        json.beginObject()
        json.endObject()
        json.key("c")
        json.beginObject()
        json.field("d", "x")
        json.field("e", -2)
        json.endObject()
        json.key("f")
        json.raw(Array("[1,2]".utf8))
        json.endObject()
        #expect(json.text == #"{"a":1,"b":{},"c":{"d":"x","e":-2},"f":[1,2]}"#)
    }

    /// Every control character, quote and backslash escaped, wherever it stands in the string;
    /// the rest (non-ASCII included) copied as it is: Foundation reads back the same strings.
    @Test func writerEscapesWhatRFC8259Requires() throws {
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        let strings = ["", "plain", "\"", "\\", "a\"b\\c", controls, "x" + controls + "y", "ünï\ncødé 日本 🚀", "end\u{1F}", "\u{7F}/</"]
        var json = JSONWriter()
        json.beginObject()
        for (index, text) in strings.enumerated() { json.field("k\(index)\"\n", text) }
        json.endObject()
        #expect(!json.bytes.contains { $0 < 0x20 }, "a control character went out unescaped")
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: String])
        #expect(decoded.count == strings.count)
        for (index, text) in strings.enumerated() { #expect(decoded["k\(index)\"\n"] == text, "\(index)") }
        var escapes = JSONWriter()
        escapes.string("\u{01}\t\u{1F}")
        #expect(escapes.text == #""\u0001\t\u001f""#)
    }

    @Test func writerWritesIntegersAndBooleans() {
        var json = JSONWriter()
        json.beginObject()
        for (index, value) in [0, 7, -1, 10, -10, 1_234_567, Int.max, Int.min].enumerated() { json.field("n\(index)", value) }
        json.field("t", true)
        json.field("f", false)
        json.endObject()
        #expect(
            json.text
                == #"{"n0":0,"n1":7,"n2":-1,"n3":10,"n4":-10,"n5":1234567,"n6":9223372036854775807,"n7":-9223372036854775808,"t":true,"f":false}"#
        )
    }
}

@Suite("JSON string arrays")
struct JSONStringArrayTests {
    @Test(arguments: [
        #"[]"#, #" [ "a" , "b" ] "#, #"["username:alice","sports"]"#, #"["q\"u\\o\/te","\n\t\r\b\f"]"#,
        #"["\u00e9\u65e5","\ud83d\ude80","ünïcødé"]"#, #"["plain then\nescaped","tail\\","x"]"#,
    ])
    func parsesWhatJSONDecoderParses(text: String) throws {
        let expected = try JSONDecoder().decode([String].self, from: Data(text.utf8))
        #expect(JSONStringArray.parse(Array(text.utf8)) == expected)
    }

    @Test(arguments: [#""#, #"["a""#, #"["a",]"#, #"[1]"#, #"["\x"]"#, #"["\ud83d"]"#, "[\"a\u{01}\"]", #"["a"] x"#, #"{"a":1}"#])
    func refusesWhatIsNotAnArrayOfStrings(text: String) {
        #expect(JSONStringArray.parse(Array(text.utf8)) == nil)
    }

    @Test func refusesBytesThatAreNotUTF8() {
        #expect(JSONStringArray.parse([0x5B, 0x22, 0xFF, 0x22, 0x5D]) == nil)
        #expect(JSONStringArray.parse([0x5B, 0x22, 0x61, 0x5C, 0x6E, 0xC3, 0x22, 0x5D]) == nil)
        #expect(JSONStringArray.parse(ArraySlice([0x5B, 0x22, 0xC3, 0xA9, 0x22, 0x5D])) == ["é"])
    }
}
