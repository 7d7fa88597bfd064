import RichPushCore
import Testing

/// A template send's properties: locales normalised and chosen by the chain exact → language →
/// the app's default → first given, order kept through storage, every bound enforced.
@Suite("Send properties and locales")
struct SendPropertiesTests {
    @Test(arguments: [
        ("fr_CA", "fr-CA"), ("FR-ca", "fr-CA"), ("en", "en"), ("zh_hant_tw", "zh-Hant-TW"), ("es-419", "es-419"), ("sr-Latn", "sr-Latn"),
    ])
    func localesAreNormalised(_ input: String, _ expected: String) {
        #expect(LocaleTag(input)?.identifier == expected)
    }

    @Test(arguments: ["", "e", "english", "fr--CA", "fr-", "fr CA", "fr-toolongsubtag", "ü", String(repeating: "a-", count: 20)])
    func malformedLocalesAreRefused(_ input: String) {
        #expect(LocaleTag(input) == nil)
    }

    @Test func eachLocaleTakesTheChain() throws {
        let properties = try SendProperties.parse(
            json: Array(#"{"title": {"fr-CA": "Allo", "en": "Hi", "fr": "Salut", "pt-BR": "Oi"}, "n": 4, "b": true}"#.utf8))
        #expect(properties.values(for: "fr-CA").values["title"] == "Allo")
        #expect(properties.values(for: "fr_CA").values["title"] == "Allo")
        #expect(properties.values(for: "fr-BE").values["title"] == "Salut", "the language")
        #expect(properties.values(for: "pt").values["title"] == "Oi", "the language's first region")
        #expect(properties.values(for: "ja").values["title"] == "Allo", "the first given")
        #expect(properties.values(for: nil).values == ["title": "Allo", "n": "4", "b": "true"])
        #expect(properties.values(for: nil).chosen == "fr-CA")
        #expect(properties.values(for: "en").chosen == "en")
        // Stored and read back: the same, in the same order.
        #expect(try SendProperties.parse(json: properties.json) == properties)
    }

    @Test func theAppsDefaultComesBeforeTheFirstGiven() throws {
        var properties = try SendProperties.parse(
            json: Array(#"{"title": {"fr-CA": "Allo", "en-GB": "Hi", "de": "Hallo"}, "n": "1"}"#.utf8))
        properties.defaultLocale = "en"
        #expect(properties.values(for: "ja").values["title"] == "Hi", "the default's language (its first region)")
        #expect(properties.values(for: "ja").chosen == "en-GB")
        #expect(properties.values(for: nil).values["title"] == "Hi", "no locale: the default")
        #expect(properties.values(for: "de-AT").values["title"] == "Hallo", "the device's own language before the default")
        #expect(properties.values(for: "fr-CA").chosen == "fr-CA")
        properties.defaultLocale = "es"
        #expect(properties.values(for: "ja").values["title"] == "Allo", "a default no property gives: the first given")
        // The default is not part of the properties' JSON (it is stored beside them).
        #expect(try SendProperties.parse(json: properties.json).defaultLocale == nil)
    }

    @Test(arguments: [
        #"[]"#, #"{"a": null}"#, #"{"a": [1]}"#, #"{"a": {"en": {"x": "y"}}}"#, #"{"a": {}}"#, #"{"a b": "x"}"#, #"{"A": "1", "a": "2"}"#,
        #"{"a": {"en": "1", "EN": "2"}}"#, #"{"a": {"xx_": "1"}}"#, #"{"a": "1", "a": "2"}"#,
    ])
    func malformedPropertiesAreRefused(_ json: String) {
        #expect(throws: SendPropertiesError.self) { try SendProperties.parse(json: Array(json.utf8)) }
    }

    @Test func boundsHold() {
        let many = "{" + (0...SendProperties.maxCount).map { "\"p\($0)\": \"v\"" }.joined(separator: ",") + "}"
        #expect(throws: SendPropertiesError.self) { try SendProperties.parse(json: Array(many.utf8)) }
        let locales =
            "{\"t\": {" + (0...SendProperties.maxLocales).map { "\"l\(String(UnicodeScalar(97 + $0)!))\": \"v\"" }.joined(separator: ",")
            + "}}"
        #expect(throws: SendPropertiesError.self) { try SendProperties.parse(json: Array(locales.utf8)) }
        let long = "{\"t\": \"\(String(repeating: "x", count: SendProperties.maxBytes))\"}"
        #expect(throws: SendPropertiesError.self) { try SendProperties.parse(json: Array(long.utf8)) }
    }

    @Test func aMemberIsFoundInTheBodyWithItsOrder() {
        let body = Array(#"{"message": "m", "Properties": {"b": "1", "a": "2"}, "x": [1, {"y": 2}]}"#.utf8)
        #expect(SendProperties.member("properties", of: body).map { String(decoding: $0, as: UTF8.self) } == #"{"b": "1", "a": "2"}"#)
        #expect(SendProperties.member("properties", of: Array(#"{"properties": null}"#.utf8)) == nil)
    }
}
