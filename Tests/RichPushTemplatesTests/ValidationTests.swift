import Testing

@testable import RichPushTemplates

/// One test per reason a template is refused at compile time, each checking the code, the
/// pointer of the value at fault and the column (1-based) in the body.
@Suite("Validation at compile time")
struct ValidationTests {
    /// The #39 trap: Notification Hubs delivers "Some other text. $(message)" verbatim.
    @Test func expressionMixedWithText() throws {
        let error = try #require(compileError(#"{"aps": {"alert": "Some other text. $(message)"}}"#))
        #expect(error.code == .expressionMixedWithText)
        #expect(error.pointer == "/aps/alert")
        #expect(error.location.line == 1)
        #expect(error.location.column == 37)  // the '$' of $(message)
        #expect(error.message.hasPrefix("'$(message)' is mixed with text outside {}"))
        #expect(error.message.contains(#"write "{'Some other text. ' + $(message)}""#))
    }

    @Test(arguments: [
        (#"{"a": "Hi $(name)!"}"#, #""{'Hi ' + $(name) + '!'}""#),
        (#"{"a": "$(first) $(last)"}"#, #""{$(first) + ' ' + $(last)}""#),
        (#"{"a": "$(first)$(last)"}"#, #""{$(first) + $(last)}""#),
        (#"{"a": "It's $(name)"}"#, #""{\"It's \" + $(name)}""#),
        (#"{"a": "$(a) + $(b)"}"#, #""{$(a) + $(b)}""#),
    ])
    func mixedTextSaysHowToWriteIt(body: String, fix: String) throws {
        let error = try #require(compileError(body))
        #expect(error.code == .expressionMixedWithText)
        #expect(error.message.contains("write \(fix)"), "\(error.message)")
    }

    @Test func textAfterTheClosingBrace() throws {
        let error = try #require(compileError(#"{"a": "{'Hi ' + $(name)}!"}"#))
        #expect(error.code == .expressionMixedWithText)
        #expect(error.location.column == 25)
    }

    @Test func expressionOutsideString() throws {
        let error = try #require(compileError(#"{"aps": {"badge": #(count)}}"#))
        #expect(error.code == .expressionOutsideString)
        #expect(error.pointer == "/aps/badge")
        #expect(error.location.column == 19)
        #expect(error.message.contains(##""#(count)""##))
    }

    @Test(arguments: [
        #"{"a": $(x)}"#,
        #"{"a": [1, %(x)]}"#,
        #"{"a": {'Hi ' + $(x)}}"#,
        #"{"a": {$(x)}}"#,
        #"$(x)"#,
    ])
    func expressionsOutsideStrings(body: String) {
        #expect(compileError(body)?.code == .expressionOutsideString)
    }

    @Test func expressionInKey() throws {
        let error = try #require(compileError(#"{"data": {"$(key)": "value"}}"#))
        #expect(error.code == .expressionInKey)
        #expect(error.pointer == "/data/$(key)")
        #expect(error.location.column == 12)
    }

    @Test func unbalancedBraces() throws {
        let error = try #require(compileError(#"{"a": "{'Hi ' + $(name)"}"#))
        #expect(error.code == .unbalancedBraces)
        #expect(error.pointer == "/a")
        #expect(error.location.column == 8)
        #expect(compileError(#"{"a": "$(name)}"}"#)?.code == .unbalancedBraces)
        #expect(compileError(#"{"a": "{$(name)}}"}"#)?.code == .unbalancedBraces)
    }

    @Test func unbalancedParentheses() throws {
        let error = try #require(compileError(#"{"a": {"b": "$(name"}}"#))
        #expect(error.code == .unbalancedParentheses)
        #expect(error.pointer == "/a/b")
        #expect(error.location.column == 14)
        #expect(compileError(#"{"a": "{$(name, 5}"}"#)?.code == .unbalancedParentheses)
        #expect(compileError(#"{"a": "{$(name))}"}"#)?.code == .unbalancedParentheses)
        #expect(compileError(#"{"a": "$(name))"}"#)?.code == .unbalancedParentheses)
    }

    @Test func unknownFunction() throws {
        let error = try #require(compileError(#"{"a": "{'Hi ' + upper(name)}"}"#))
        #expect(error.code == .unknownFunction)
        #expect(error.message.contains("'upper('"))
        #expect(error.location.column == 17)
        #expect(compileError(#"{"a": "{&(name)}"}"#)?.code == .unknownFunction)
        #expect(compileError(#"{"a": "{@(name)}"}"#)?.code == .unknownFunction)
    }

    @Test func invalidExpression() throws {
        let error = try #require(compileError(#"{"a": "{$(a) $(b)}"}"#))
        #expect(error.code == .invalidExpression)
        #expect(error.message.contains("'+'"))
        #expect(error.location.column == 14)
        for body in [
            #"{"a": "{}"}"#, #"{"a": "{$(a) + }"}"#, #"{"a": "{'never closed}"}"#, #"{"a": "{{$(a)}}"}"#, #"{"a": "{hello}"}"#,
            #"{"a": "{$(a) - $(b)}"}"#,
        ] {
            #expect(compileError(body)?.code == .invalidExpression, "\(body)")
        }
    }

    @Test func invalidPropertyName() throws {
        let error = try #require(compileError(#"{"a": "$(first name)"}"#))
        #expect(error.code == .invalidPropertyName)
        #expect(error.location.column == 15)
        let long = String(repeating: "n", count: 129)
        for body in [#"{"a": "$()"}"#, #"{"a": "$(ü)"}"#, #"{"a": "{$(a!)}"}"#, #"{"a": "$(\#(long))"}"#] {
            #expect(compileError(body)?.code == .invalidPropertyName, "\(body)")
        }
    }

    @Test func invalidLength() throws {
        let error = try #require(compileError(#"{"a": "$(title, twenty)"}"#))
        #expect(error.code == .invalidLength)
        #expect(error.location.column == 17)
        for body in [
            #"{"a": "$(t, 0)"}"#, #"{"a": ".(t)"}"#, #"{"a": ".(t, 2)"}"#, #"{"a": "%(t, 5)"}"#, ##"{"a": "#(t, 5)"}"##,
            #"{"a": "$(t, 100001)"}"#, #"{"a": "$(t, 99999999999999999999999)"}"#, #"{"a": "$(t, 5 5)"}"#, #"{"a": "$(t, -5)"}"#,
        ] {
            #expect(compileError(body)?.code == .invalidLength, "\(body)")
        }
    }

    @Test func expressionInLiteral() throws {
        let error = try #require(compileError(#"{"a": "{'Hello $(name)'}"}"#))
        #expect(error.code == .expressionInLiteral)
        #expect(error.location.column == 9)
        // Split across literals it is still a call in quotes.
        #expect(compileError(#"{"a": "{'Hello $' + '(name)'}"}"#)?.code == .expressionInLiteral)
    }

    /// Escapes count: `\u0024(` is `$(` once the JSON is read.
    @Test func escapedCallsAreCalls() {
        #expect(compileError(#"{"a": "Hi \u0024(name)"}"#)?.code == .expressionMixedWithText)
        #expect(compileError(#"{"\u0024(k)": "v"}"#)?.code == .expressionInKey)
    }

    @Test func invalidJSON() throws {
        let error = try #require(compileError("{\n  \"aps\": {\"alert\": \"$(message)\",}\n}"))
        #expect(error.code == .invalidJSON)
        #expect(error.pointer == "/aps")
        #expect(error.location.line == 2)
        #expect(error.location.column == 33)
        for body in [
            "", "[]", #""$(message)""#, "{", #"{"a": 1} x"#, #"{"a" 1}"#, #"{"a": 01}"#, #"{"a": 1.}"#, #"{"a": tru}"#,
            #"{"a": 'single'}"#, "{\"a\": \"tab\tinside\"}", #"{"a": "\x"}"#, #"{"a": "\ud800"}"#, #"{"a": "\udc00\ud800"}"#,
            #"{"a": 1, "a": 2}"#, #"{"a": [1,]}"#, #"{"a": "never closed}"#,
        ] {
            #expect(compileError(body)?.code == .invalidJSON, "\(body)")
        }
    }

    @Test func bodyTooLarge() throws {
        let body = #"{"a": ""# + String(repeating: "x", count: 16 * 1024) + #""}"#
        #expect(compileError(body)?.code == .bodyTooLarge)
        var configuration = Template.Configuration()
        configuration.maxBodyBytes = 64 * 1024
        #expect(throws: Never.self) { try Template(body, configuration: configuration) }
    }

    @Test func tooDeep() throws {
        let body = String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)
        let error = try #require(compileError(body))
        #expect(error.code == .tooDeep)
        #expect(error.pointer == String(repeating: "/a", count: 32))
        let fine = String(repeating: #"{"a":"#, count: 32) + #""$(x)""# + String(repeating: "}", count: 32)
        #expect(throws: Never.self) { try Template(fine) }
    }

    @Test func tooManyExpressions() {
        let values = (0...256).map { #""k\#($0)": "$(p\#($0))""# }.joined(separator: ",")
        #expect(compileError("{\(values)}")?.code == .tooManyExpressions)
        let terms = Array(repeating: "$(p)", count: 65).joined(separator: " + ")
        #expect(compileError(#"{"a": "{\#(terms)}"}"#)?.code == .tooManyExpressions)
    }

    /// Where the column counts characters, not bytes, on the error's own line.
    @Test func columnsCountCharactersPerLine() throws {
        let error = try #require(compileError("{\"ü\": \"é\",\n \"b\": \"ü Hi $(x)\"}"))
        #expect(error.location.line == 2)
        #expect(error.location.column == 13)
        #expect(error.description.contains("/b, line 2, column 13"))
    }

    @Test func pointersEscapeTildeAndSlash() throws {
        let error = try #require(compileError(#"{"a/b": {"c~d": ["x", "Hi $(y)"]}}"#))
        #expect(error.pointer == "/a~1b/c~0d/1")
    }

    @Test func errorCodesAreStableStrings() {
        #expect(TemplateError.Code.expressionMixedWithText.rawValue == "expression_mixed_with_text")
        #expect(TemplateError.Code.invalidJSON.description == "invalid_json")
    }
}

extension ValidationTests {
    /// `{.(title, 9) + '(more)'}` would render `...(more)`, which reads as an unrendered
    /// `.(`; so would `{'$' + '(x)'}` and `{'US$' + $(empty) + '(approx)'}` with an empty value.
    @Test func literalsThatWouldSpellACall() throws {
        let error = try #require(compileError(#"{"a": "{.(title, 9) + '(more)'}"}"#))
        #expect(error.code == .expressionInLiteral)
        #expect(error.location.column == 23)
        #expect(compileError(#"{"a": "{'US$' + $(amount) + '(approx)'}"}"#)?.code == .expressionInLiteral)
        #expect(throws: Never.self) { try Template(#"{"a": "{.(title, 9) + ' (more)'}"}"#) }
        #expect(throws: Never.self) { try Template(#"{"a": "{'US$' + $(amount) + ' (approx)'}"}"#) }
        #expect(throws: Never.self) { try Template(#"{"a": "{'(' + $(x) + ')'}"}"#) }
    }
}
