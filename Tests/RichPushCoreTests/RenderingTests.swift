import Foundation
import Testing
import RichPushCore

@Suite("Rendering")
struct RenderingTests {
    static let messages = [
        "Check this image out!",
        "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul \u{00}",
        "unicode: ünïcødé 🚀 日本語",
        "",
    ]

    static func notification(_ message: String, type: RichType = .image) -> RichNotification {
        RichNotification(id: 42, message: message, richType: type, contentType: "image/png", payloadHash: "h",
                         payloadSize: 3, creator: "alice", target: "username:alice", createdAt: 0)
    }

    /// The hand-written writer must produce what Foundation's sorted-key encoder does, byte for byte.
    @Test(arguments: messages, PushRenderer.Mode.allCases)
    func payloadMatchesFoundation(message: String, mode: PushRenderer.Mode) throws {
        let renderer = PushRenderer(mode: mode, legacySound: true, apiBaseURL: "http://api.example/x")
        let rendered = try renderer.render(Self.notification(message), collapseID: "1-0")
        var aps: [String: Any] = mode == .silent ? ["content-available": 1, "sound": ""]
            : ["alert": ["body": message], "mutable-content": 1, "category": "richPush"]
        if mode == .alert { aps.removeValue(forKey: "sound") }
        var root: [String: Any] = ["aps": aps, "richId": "42", "richMessage": message, "richType": "img"]
        if mode == .alert { root["richUrl"] = "http://api.example/x/api/notifications/42" }
        let expected = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(rendered.payload)) as? [String: Any])
        #expect(parsed["richMessage"] as? String == message)
        #expect(String(decoding: rendered.payload, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func silentPushHasTheSeedKeysAndAPNsMetadata() throws {
        let rendered = try PushRenderer().render(Self.notification("hi"), collapseID: "1700000000000-0", now: Date(timeIntervalSince1970: 1000))
        #expect(String(decoding: rendered.payload, as: UTF8.self) == #"{"aps":{"content-available":1},"richId":"42","richMessage":"hi","richType":"img"}"#)
        #expect(rendered.pushType == "background")
        #expect(rendered.priority == 5)
        #expect(rendered.expiration == 1000 + 86400)
        #expect(rendered.collapseID == "1700000000000-0")
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
