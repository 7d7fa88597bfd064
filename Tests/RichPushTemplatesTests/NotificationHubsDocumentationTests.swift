import Testing

@testable import RichPushTemplates

/// Every example of Microsoft's "Notification Hubs templates" page
/// (learn.microsoft.com/azure/notification-hubs/notification-hubs-templates-cross-platform-push-messages),
/// quoted, with the output the page gives or describes. The page's XML (Windows) examples are
/// out of scope, RichPush's platforms take JSON: each is checked to be refused, with its JSON
/// counterpart checked beside it.
@Suite("Notification Hubs documentation examples")
struct NotificationHubsDocumentationTests {
    /// "to send an alert to APNS, the payload is a JSON object of the following form:
    /// {"aps": {"alert" : "Hello!" }}": a body with no expression is sent as it is.
    @Test func nativePayloadIsItsOwnTemplate() throws {
        let body = #"{"aps": {"alert" : "Hello!" }}"#
        #expect(try render(body) == body)
    }

    /// "The template for the iOS client app registration is as follows:
    /// {"aps": {"alert": "$(message)"}}" with "a single property: message = Hello!".
    @Test func iOSTemplateWithMessage() throws {
        #expect(try render(#"{"aps": {"alert": "$(message)"}}"#, ["message": "Hello!"]) == #"{"aps": {"alert": "Hello!"}}"#)
    }

    /// The corresponding Windows Store template is XML: refused, a JSON object is expected.
    @Test func windowsToastTemplateIsXML() {
        let body = #"<toast><visual><binding template=\"ToastText01\"><text id=\"1\">$(message)</text></binding></visual></toast>"#
        #expect(compileError(body)?.code == .invalidJSON)
    }

    /// The weather tile: a template picks its own properties (`day1_image`, `day1_tempC`) out of
    /// the fifteen the message carries; the others are ignored. Its JSON counterpart here.
    @Test func personalizationPicksItsProperties() throws {
        var properties: [String: String] = [:]
        for day in 1...5 {
            properties["day\(day)_image"] = "https://example.com/day\(day).png"
            properties["day\(day)_tempC"] = "\(10 + day)°C"
            properties["day\(day)_tempF"] = "\(50 + day)°F"
        }
        let body = #"{"image": {"id": "1", "src": "$(day1_image)", "alt": "alt text"}, "text": ["Seattle, WA", "$(day1_tempC)"]}"#
        let output = try render(body, properties)
        #expect(
            output == #"{"image": {"id": "1", "src": "https://example.com/day1.png", "alt": "alt text"}, "text": ["Seattle, WA", "11°C"]}"#)
        #expect(try Template(body).propertyNames == ["day1_image", "day1_tempc"])
    }

    /// "$(prop): Reference to an event property with the given name. Property names are not
    /// case-sensitive. This expression resolves into the property's text value or into an empty
    /// string if the property is not present."
    @Test func propertyReference() throws {
        #expect(try render(#"{"a": "$(Title)"}"#, ["tITLE": "Breaking"]) == #"{"a": "Breaking"}"#)
        #expect(try render(#"{"a": "$(title)"}"#, missing: .empty) == #"{"a": ""}"#)
    }

    /// "$(prop, n): As above, but the text is explicitly clipped at n characters, for example
    /// $(title, 20) clips the contents of the title property at 20 characters."
    @Test func clipAtN() throws {
        #expect(try render(#"{"a": "$(title, 20)"}"#, ["title": "This is the title line"]) == #"{"a": "This is the title li"}"#)
    }

    /// ".(prop, n): As above, but the text is suffixed with three dots as it is clipped. The
    /// total size of the clipped string and the suffix does not exceed n characters.
    /// .(title, 20) with an input property of "This is the title line" results in
    /// This is the title..."
    @Test func clipWithEllipsis() throws {
        #expect(try render(#"{"a": ".(title, 20)"}"#, ["title": "This is the title line"]) == #"{"a": "This is the title..."}"#)
    }

    /// "%(prop): Similar to $(name) except that the output is URI-encoded."
    @Test func uriEncoded() throws {
        #expect(try render(#"{"url": "%(q)"}"#, ["q": "rock & roll/ä"]) == #"{"url": "rock%20%26%20roll%2F%C3%A4"}"#)
    }

    /// "#(prop): ... if this function is not surrounded by {','} (for example,
    /// 'myJsonProperty' : '#(name)'), and it evaluates to a number in JavaScript format ...
    /// then the output JSON is a number. For example, 'badge: '#(name)' becomes 'badge' : 40
    /// (and not '40')."
    @Test func numberUnquoted() throws {
        #expect(try render(##"{"aps": {"badge": "#(name)"}}"##, ["name": "40"]) == #"{"aps": {"badge": 40}}"#)
        // "works exactly the same as $(prop)" otherwise: not a number, or inside {}.
        #expect(try render(##"{"aps": {"badge": "#(name)"}}"##, ["name": "forty"]) == #"{"aps": {"badge": "forty"}}"#)
        #expect(try render(#"{"aps": {"badge": "{#(name)}"}}"#, ["name": "40"]) == #"{"aps": {"badge": "40"}}"#)
    }

    /// "'text' or "text": A literal. Literals contain arbitrary text enclosed in single or
    /// double quotes." (Double quotes inside a JSON string are written \".)
    @Test func literals() throws {
        #expect(try render(#"{"a": "{'text'}"}"#) == #"{"a": "text"}"#)
        #expect(try render(#"{"a": "{\"text\"}"}"#) == #"{"a": "text"}"#)
    }

    /// "expr1 + expr2: The concatenation operator joining two expressions into a single
    /// string." and "When using concatenation, the entire expression must be surrounded with
    /// {}. For example, {$(prop) + ' - ' + $(prop2)}."
    @Test func concatenation() throws {
        #expect(try render(#"{"a": "{$(prop) + ' - ' + $(prop2)}"}"#, ["prop": "one", "prop2": "two"]) == #"{"a": "one - two"}"#)
    }

    /// The page prints that example with typographic quotes (‘ - ’); they are not literal
    /// quotes, and the error says so.
    @Test func typographicQuotesAsPrinted() {
        let error = compileError(#"{"a": "{$(prop) + ‘ - ’ + $(prop2)}"}"#)
        #expect(error?.code == .invalidExpression)
        #expect(error?.message.contains("typographic") == true)
    }

    /// "the following template is not a valid XML template: <binding $(property)>": an
    /// expression only goes where a value does. Its JSON counterpart is refused the same way.
    @Test func expressionOutsideAValue() {
        let xml = #"<tile><visual><binding $(property)><text id="1">Seattle, WA</text></binding></visual></tile>"#
        #expect(compileError(xml)?.code == .invalidJSON)
        #expect(compileError(#"{"binding": $(property)}"#)?.code == .expressionOutsideString)
    }

    /// "when using concatenation, expressions must be wrapped in curly brackets. For example:
    /// <text id="1">{'Hi, ' + $(name)}</text>".
    @Test func hiName() throws {
        #expect(try render(#"{"text": "{'Hi, ' + $(name)}"}"#, ["name": "Ada"]) == #"{"text": "Hi, Ada"}"#)
    }
}
