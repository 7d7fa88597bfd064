import Foundation
import RichPushCore
import RichPushNH
import Testing

@testable import RichPushAPI

@Suite("NH bulk registration files")
struct NHRegistrationFileTests {
    static let token = String(repeating: "d4", count: 32)

    @Test func anInstallationWithSeveralTemplatesIsOneTemplateRegistrationEach() throws {
        let line = """
            <AppleTemplateRegistrationDescription \(NHRegistrationDescriptionTests.connect)><RegistrationId>inst-1</RegistrationId>\
            <Tags>a,b</Tags><DeviceToken>\(Self.token)</DeviceToken><BodyTemplate><![CDATA[{"aps":{"alert":"$(m)"}}]]></BodyTemplate>\
            <TemplateName>one</TemplateName></AppleTemplateRegistrationDescription>
            """
        var installation = try NHRegistrationFile.installation(line: line, updatedAt: 5)
        #expect(installation.id == "inst-1" && installation.tags == ["a", "b"] && installation.templates.map(\.name) == ["one"])
        #expect(NHRegistrationFile.lines(installation).count == 1)
        #expect(try NHRegistrationFile.installation(line: NHRegistrationFile.lines(installation)[0], updatedAt: 5) == installation)
        var second = try #require(installation.templates.first)
        second.name = "two"
        installation.templates.append(second)
        let lines = NHRegistrationFile.lines(installation)
        let read = try lines.map { try NHRegistrationFile.installation(line: $0, updatedAt: 5) }
        #expect(read.map(\.templates.count) == [1, 1] && read.map { $0.templates[0].name } == ["one", "two"])
        #expect(read[0].id == "inst-1" && read[1].id.hasPrefix("inst-1-") && read[1].id.count == 15)
        #expect(NHRegistrationFile.lines(installation) == lines, "the same ids on every export")
        #expect(read.allSatisfy { $0.handle == Self.token && $0.tags == ["a", "b"] })
    }

    @Test func aLineWithoutAnIdGetsOneAndABadLineSaysWhy() throws {
        let line = """
            <GcmRegistrationDescription \(NHRegistrationDescriptionTests.connect)><GcmRegistrationId>g-1</GcmRegistrationId>\
            </GcmRegistrationDescription>
            """
        let first = try NHRegistrationFile.installation(line: line, updatedAt: 5)
        #expect(first.platform == .gcm && first.handle == "g-1" && NHInstallationID.isValid(first.id))
        #expect(try NHRegistrationFile.installation(line: line, updatedAt: 5).id != first.id)
        #expect(throws: NHError.self) { try NHRegistrationFile.installation(line: "<Nope/>", updatedAt: 5) }
        #expect(throws: NHError.self) { try NHRegistrationFile.installation(line: String(repeating: " ", count: 70_000), updatedAt: 5) }
        #expect(throws: NHError.self) {
            try NHRegistrationFile.installation(
                line: line.replacingOccurrences(of: "<GcmRegistrationId>", with: "<RegistrationId>a/b</RegistrationId><GcmRegistrationId>"),
                updatedAt: 5)
        }
    }
}
