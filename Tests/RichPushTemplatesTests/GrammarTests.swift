import Testing

@testable import RichPushTemplates

@Suite("Expression grammar")
struct GrammarTests {
    // MARK: Clipping

    @Test(arguments: [
        ("Hello", 5, "Hello"),  // exactly n: untouched
        ("Hello", 6, "Hello"),
        ("Hello!", 5, "Hello"),
        ("", 3, ""),
        ("naïve café", 4, "naïv"),  // characters, not bytes
        ("e\u{301}e\u{301}e\u{301}", 2, "e\u{301}e\u{301}"),  // a combining accent stays with its letter
        ("👩‍👩‍👧‍👦🇫🇷🇩🇪", 2, "👩‍👩‍👧‍👦🇫🇷"),  // emoji sequences and flags are one character each
    ])
    func clip(value: String, limit: Int, expected: String) throws {
        let output = try render(#"{"a": "$(v, \#(limit))"}"#, ["v": value])
        #expect(try parsed(output)["a"] as? String == expected)
    }

    @Test(arguments: [
        ("Hello", 5, "Hello"),  // fits: no dots
        ("Hello!", 5, "He..."),
        ("Hello!", 6, "Hello!"),
        ("abcd", 3, "..."),  // the smallest n: only the dots fit
        ("abc", 3, "abc"),
        ("日本語のテキスト", 6, "日本語..."),
        ("🇫🇷🇫🇷🇫🇷🇫🇷🇫🇷", 4, "🇫🇷..."),
    ])
    func ellipsis(value: String, limit: Int, expected: String) throws {
        let output = try render(#"{"a": ".(v, \#(limit))"}"#, ["v": value])
        #expect(try parsed(output)["a"] as? String == expected)
    }

    @Test func truncationWarns() throws {
        let template = try Template(#"{"aps": {"alert": {"title": "$(title, 5)", "body": ".(body, 8)"}}}"#)
        let short = try template.render(TemplateProperties(["title": "Hi", "body": "Short"]))
        #expect(short.warnings.isEmpty)
        let long = try template.render(TemplateProperties(["title": "Hello, world", "body": "A longer body"]))
        #expect(long.text == #"{"aps": {"alert": {"title": "Hello", "body": "A lon..."}}}"#)
        #expect(long.warnings.map(\.code) == [.truncated, .truncated])
        #expect(long.warnings.map(\.pointer) == ["/aps/alert/title", "/aps/alert/body"])
        #expect(long.warnings.map(\.property) == ["title", "body"])
    }

    // MARK: URL encoding

    @Test(arguments: [
        ("abcXYZ019-._~", "abcXYZ019-._~"),  // RFC 3986 unreserved: as they are
        ("a b", "a%20b"),
        ("a+b=c&d?e#f/g:h@i", "a%2Bb%3Dc%26d%3Fe%23f%2Fg%3Ah%40i"),
        ("\"quote\" \\", "%22quote%22%20%5C"),
        ("é😀", "%C3%A9%F0%9F%98%80"),
        ("100%", "100%25"),
        ("$(x)", "%24%28x%29"),
    ])
    func uriEncoding(value: String, expected: String) throws {
        #expect(try render(#"{"u": "%(v)"}"#, ["v": value]) == #"{"u": "\#(expected)"}"#)
    }

    @Test func uriEncodingInAConcatenation() throws {
        let output = try render(
            #"{"url": "{'https://example.com/search?q=' + %(query) + '&lang=' + %(lang)}"}"#, ["query": "push & pull", "lang": "fr-CA"])
        #expect(output == #"{"url": "https://example.com/search?q=push%20%26%20pull&lang=fr-CA"}"#)
    }

    // MARK: Numbers

    @Test(arguments: ["0", "40", "3.14", "1e10", "2E-3", "6.02e+23", "10.0"])
    func numbersGoOutBare(value: String) throws {
        #expect(try render(##"{"badge": "#(n)"}"##, ["n": value]) == #"{"badge": \#(value)}"#)
    }

    /// Not the page's JavaScript number pattern: a string, escaped as any other.
    @Test(arguments: ["", "-1", "01", "1.", ".5", "1e", "0x10", " 40", "40 ", "4 0", "NaN", "Infinity", "1,000", "+1", "١٢"])
    func otherValuesStayStrings(value: String) throws {
        let output = try render(##"{"badge": "#(n)"}"##, ["n": value])
        #expect(try parsed(output)["badge"] as? String == value)
    }

    @Test func numbersInArraysAndNestedObjects() throws {
        let output = try render(##"{"a": ["#(x)", {"b": "#(y)"}], "c": "#(x)"}"##, ["x": "7", "y": "2.5"])
        #expect(output == #"{"a": [7, {"b": 2.5}], "c": 7}"#)
    }

    // MARK: Literals

    @Test func literalsKeepTheOtherQuote() throws {
        #expect(try render(#"{"a": "{\"It's \" + $(name)}"}"#, ["name": "me"]) == #"{"a": "It's me"}"#)
        #expect(try render(#"{"a": "{'Say \"hi\", ' + $(name)}"}"#, ["name": "Ada"]) == #"{"a": "Say \"hi\", Ada"}"#)
    }

    @Test func literalsAreTextAsWritten() throws {
        #expect(
            try render(#"{"a": "{'{braces} + plus, (parens) and \\backslash'}"}"#) == #"{"a": "{braces} + plus, (parens) and \\backslash"}"#
        )
        #expect(try render(#"{"a": "{'' + $(x) + ''}"}"#, ["x": "only"]) == #"{"a": "only"}"#)
        #expect(try render(#"{"a": "{'line\none'}"}"#) == #"{"a": "line\none"}"#)
        #expect(try render(#"{"a": "{'caf\u00e9'}"}"#) == #"{"a": "café"}"#)
    }

    @Test func adjacentLiteralsJoin() throws {
        #expect(try render(#"{"a": "{'a' + 'b' + $(x) + 'c' + \"d\"}"}"#, ["x": "-"]) == #"{"a": "ab-cd"}"#)
    }

    @Test func spacesAroundTerms() throws {
        #expect(try render(#"{"a": "{  $( x , 3 )+'|'+  .(y,4)  }"}"#, ["x": "abcdef", "y": "abcdef"]) == #"{"a": "abc|a..."}"#)
        #expect(try render(#"{"a": "$( x )"}"#, ["x": "ok"]) == #"{"a": "ok"}"#)
    }

    // MARK: Names

    @Test func namesAreNotCaseSensitive() throws {
        let template = try Template(#"{"a": "{$(TITLE) + $(Title) + $(title)}"}"#)
        #expect(template.propertyNames == ["title"])
        #expect(try template.render(TemplateProperties(["tItLe": "x"])).text == #"{"a": "xxx"}"#)
    }

    @Test func namesDifferingOnlyInCaseAreAmbiguous() {
        #expect(throws: TemplateRenderError.self) { try TemplateProperties(["title": "a", "Title": "b"]) }
        do {
            _ = try TemplateProperties(["title": "a", "Title": "b"])
        } catch {
            #expect(error.code == .ambiguousProperty)
            #expect(error.message.contains("'Title' and 'title'"))
        }
    }

    @Test func namesHoldDotsDashesAndUnderscores() throws {
        #expect(
            try render(#"{"a": "{$(News_French) + $(rich.id) + $(x-y)}"}"#, ["news_french": "1", "RICH.ID": "2", "X-Y": "3"])
                == #"{"a": "123"}"#)
    }

    /// NH's localization: a template picks `News_French`; a property it does not use is fine.
    @Test func unusedPropertiesAreIgnored() throws {
        let properties = ["News_English": "Hello", "News_French": "Bonjour", "News_Mandarin": "你好"]
        let output = try Template(#"{"aps": {"alert": "$(News_French)"}}"#).render(TemplateProperties(properties))
        #expect(output.text == #"{"aps": {"alert": "Bonjour"}}"#)
        #expect(output.warnings.isEmpty)
    }

    // MARK: Values

    @Test func valuesAreJSONEscaped() throws {
        let nasty = "\"quotes\" \\ / \u{0}\u{1}\u{8}\u{C}\n\r\t\u{1F} \u{7F} \u{2028}\u{2029} é 😀"
        let output = try render(#"{"a": "$(v)", "b": "{'<' + $(v) + '>'}"}"#, ["v": nasty])
        #expect(output.contains(#"\"quotes\" \\ / \u0000\u0001\b\f\n\r\t\u001f"#))
        let values = try parsed(output)
        #expect(values["a"] as? String == nasty)
        #expect(values["b"] as? String == "<\(nasty)>")
    }

    /// A property's value is data: an expression in it is not expanded again.
    @Test func valuesAreNotExpanded() throws {
        #expect(try render(#"{"a": "$(v)"}"#, ["v": "$(other)"], missing: .fail) == #"{"a": "$(other)"}"#)
    }

    @Test func plainTextIsLeftAsWritten() throws {
        let body =
            "{\n  \"aps\" : { \"alert\" : \"50% off (today) \\u00e9 {not an expression} $ # . %\", \"sound\": \"default\" },\n  \"n\": [1, -2.5e3, true, false, null]\n}"
        #expect(try render(body) == body)
    }

    @Test func everyPlaceAStringValueGoes() throws {
        let body = ##"{"aps": {"alert": {"loc-key": "GAME", "loc-args": ["$(player)", "#(score)"]}}, "list": [["$(player)"]]}"##
        #expect(
            try render(body, ["player": "Ada", "score": "12"])
                == #"{"aps": {"alert": {"loc-key": "GAME", "loc-args": ["Ada", 12]}}, "list": [["Ada"]]}"#)
    }

    @Test func rendersWithoutReparsing() throws {
        let template = try Template(##"{"aps": {"alert": "{'Hi ' + $(name)}", "badge": "#(n)"}}"##)
        var buffer: [UInt8] = Array("prefix:".utf8)
        for (name, count) in [("Ada", "1"), ("Grace", "2"), ("Linus", "3")] {
            let before = buffer.count
            let warnings = try template.render(into: &buffer, TemplateProperties(["name": name, "n": count]))
            #expect(warnings.isEmpty)
            #expect(String(decoding: buffer[before...], as: UTF8.self) == #"{"aps": {"alert": "Hi \#(name)", "badge": \#(count)}}"#)
        }
        #expect(template.expressionCount == 2)
    }
}
