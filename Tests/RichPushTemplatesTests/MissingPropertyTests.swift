import Testing

@testable import RichPushTemplates

@Suite("Missing properties")
struct MissingPropertyTests {
    let template: Template

    init() throws {
        template = try Template(
            ##"{"aps": {"alert": {"title": "$(title)", "body": "{$(body) + ' (' + $(Author) + ')'}"}, "badge": "#(badge)"}}"##)
    }

    @Test func failNamesTheProperty() throws {
        do {
            _ = try template.render(TemplateProperties(["title": "T", "body": "B", "badge": "1"]), missing: .fail)
            Issue.record("rendered without 'author'")
        } catch {
            #expect(error.code == .missingProperty)
            #expect(error.code.rawValue == "template_missing_property")
            #expect(error.property == "Author")
            #expect(error.pointer == "/aps/alert/body")
        }
    }

    @Test func failIsTheDefault() {
        #expect(throws: TemplateRenderError.self) { try template.render(.none) }
    }

    @Test func fallbackTakesTheDefaults() throws {
        let defaults = try TemplateProperties(["AUTHOR": "staff", "badge": "0", "title": "unused"])
        let rendered = try template.render(TemplateProperties(["title": "T", "body": "B"]), missing: .fallback(defaults))
        #expect(rendered.text == #"{"aps": {"alert": {"title": "T", "body": "B (staff)"}, "badge": 0}}"#)
        #expect(rendered.warnings.map(\.code) == [.defaultUsed, .defaultUsed])
        #expect(rendered.warnings.map(\.property) == ["Author", "badge"])
    }

    @Test func fallbackWithoutTheDefaultFails() throws {
        let defaults = try TemplateProperties(["author": "staff"])
        do {
            _ = try template.render(TemplateProperties(["body": "B", "badge": "2"]), missing: .fallback(defaults))
            Issue.record("rendered without 'title'")
        } catch {
            #expect(error.code == .missingProperty)
            #expect(error.property == "title")
            #expect(error.pointer == "/aps/alert/title")
        }
    }

    /// Notification Hubs' documented behaviour: an empty string, here with a warning each.
    @Test func emptyIsNotificationHubsBehaviour() throws {
        let rendered = try template.render(.none, missing: .empty)
        #expect(rendered.text == #"{"aps": {"alert": {"title": "", "body": " ()"}, "badge": ""}}"#)
        #expect(rendered.warnings.count == 4)
        #expect(Set(rendered.warnings.map(\.code)) == [.missingProperty])
    }

    @Test func aFailedRenderLeavesTheBufferAsItWas() throws {
        var buffer = Array("kept".utf8)
        #expect(throws: TemplateRenderError.self) {
            _ = try template.render(into: &buffer, TemplateProperties(["title": "T", "body": "B"]))
        }
        #expect(buffer == Array("kept".utf8))
    }
}
