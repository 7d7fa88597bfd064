import Foundation
import RichPushCore
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":{"d":"e\n\u00e9"},"f":-0.5e-3,"g":""}"#, #" [ ] "#, #"{}"#, #""x""#, "0", "-12", "1E+2",
        #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"richId":"42","richType":"img"}"#, #"[[[[1]]],{"a":{"b":{}}}]"#,
    ])
    func readsWhatJSONSerializationReads(text: String) throws {
        let value = try #require(JSONValue.parse(Array(text.utf8)))
        let foundation = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
        #expect(Self.same(value, foundation), "\(text)")
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "01", "1.", ".5", "-", "+1", "1e", "tru", "nul", "NaN",
        "[1] [2]", #""a"#, "\"a\u{01}\"", #""\x""#, #""\ud800""#, "[1 2]", #"{"a":1 "b":2}"#,
    ])
    func refusesWhatIsNotJSON(text: String) {
        #expect(JSONValue.parse(Array(text.utf8)) == nil, "\(text)")
    }

    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":{"d":"e\n\u00e9"},"f":-0.5e-3,"g":""}"#, #"[]"#, #"{}"#, #""x""#, "0",
        #"{"z":{"y":[{"x":"\"q\""}]},"a":"/"}"#,
    ])
    func writesWhatItReads(text: String) throws {
        let value = try #require(JSONValue.parse(Array(text.utf8)))
        var json = JSONWriter()
        json.value(value)
        #expect(JSONValue.parse(json.bytes) == value, "\(json.text)")
        let foundation = try JSONSerialization.jsonObject(with: Data(json.bytes), options: .fragmentsAllowed)
        #expect(Self.same(value, foundation), "\(json.text)")
    }

    @Test func writesMembersInSortedOrder() throws {
        var json = JSONWriter()
        json.value(.object(["b": .array([.number("1"), .null]), "a": .object(["d": .bool(true), "c": .string("x")])]))
        #expect(json.text == #"{"a":{"c":"x","d":true},"b":[1,null]}"#)
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(JSONValue.parse(Array(deep.utf8)) == nil)
        #expect(JSONValue.parse(Array(deep.utf8), maxDepth: 33) != nil)
        // Far deeper than any stack allows recursion for: refused, not a crash.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(JSONValue.parse(Array(hostile.utf8)) == nil)
    }

    @Test func membersAndConversions() throws {
        let value = try #require(JSONValue.parse(Array(#"{"n":12,"f":1.5,"s":"x","a":[1],"big":123456789012345678901234567890}"#.utf8)))
        #expect(value["n"]?.int == 12 && value["f"]?.int == nil && value["s"]?.string == "x")
        #expect(value["s"]?.int == nil && value["n"]?.string == nil && value["a"]?["x"] == nil && value["missing"] == nil)
        #expect(value["big"] == .number("123456789012345678901234567890") && value["big"]?.int == nil)
        #expect(JSONValue.parse([0x22, 0xFF, 0x22]) == nil)
    }

    /// Strings are valid UTF-8 or refused: overlong forms, surrogates, bytes past U+10FFFF,
    /// stray continuation bytes and truncated sequences, with and without an escape before them.
    @Test(
        arguments: [
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE6, 0x97], [0xF0, 0x9F, 0x9A],
            [0xFE],
        ] as [[UInt8]])
    func refusesInvalidUTF8(_ invalid: [UInt8]) {
        for prefix in [[], Array("ok".utf8), Array(#"\n"#.utf8)] as [[UInt8]] {
            #expect(JSONValue.parse([0x22] + prefix + invalid + [0x22]) == nil, "\(prefix + invalid)")
            #expect(JSONValue.parse([0x22] + prefix + invalid + Array("tail".utf8) + [0x22]) == nil, "\(prefix + invalid)")
        }
    }

    @Test func keepsValidUTF8AsItIs() {
        for text in ["é", "日本", "🚀", "\u{10FFFF}", "\u{FFFD}", "aé\u{7F}z", String(repeating: "ü", count: 300)] {
            let quoted = [0x22] + Array(text.utf8) + [0x22]
            #expect(JSONValue.parse(quoted) == .string(text), "\(text)")
            #expect(JSONValue.parse([0x22, 0x5C, 0x6E] + Array(text.utf8) + [0x22]) == .string("\n" + text), "\(text)")
        }
    }

    /// Whether a JSONValue and what JSONSerialization made of the same text agree.
    static func same(_ value: JSONValue, _ other: Any) -> Bool {
        switch value {
        case .null: return other is NSNull
        case .bool(let flag): return (other as? NSNumber).map { String(cString: $0.objCType) == "c" && $0.boolValue == flag } ?? false
        case .number(let text):
            return (other as? NSNumber).map { String(cString: $0.objCType) != "c" && $0.doubleValue == Double(text) } ?? false
        case .string(let text): return other as? String == text
        case .array(let elements):
            guard let others = other as? [Any], others.count == elements.count else { return false }
            return zip(elements, others).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let others = other as? [String: Any], others.count == members.count else { return false }
            return members.allSatisfy { name, member in others[name].map { same(member, $0) } ?? false }
        }
    }
}
