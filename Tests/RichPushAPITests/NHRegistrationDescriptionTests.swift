import RichPushCore
import RichPushNH
import Testing

@testable import RichPushAPI

@Suite("NH registration descriptions")
struct NHRegistrationDescriptionTests {
    static let connect =
        #"xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance""#
    static let token = String(repeating: "c1", count: 32)

    static func installation(_ description: String, id: String = "r-1") throws -> Installation {
        let entry = #"<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">\#(description)</content></entry>"#
        return try NHRegistrationDescription.installation(NHXML.parse(Array(entry.utf8)), id: id, updatedAt: 1_000)
    }

    @Test func aTemplateRegistrationIsAnInstallationWithThatTemplate() throws {
        let installation = try Self.installation(
            """
            <AppleTemplateRegistrationDescription \(Self.connect)><Tags>sports, vip</Tags><DeviceToken>\(Self.token)</DeviceToken>
            <BodyTemplate><![CDATA[{"aps":{"alert":"$(message)"}}]]></BodyTemplate><Expiry i:nil="true"/><TemplateName>alert</TemplateName>
            <ApnsHeaders><ApnsHeader><Header>apns-priority</Header><Value>10</Value></ApnsHeader></ApnsHeaders>
            </AppleTemplateRegistrationDescription>
            """)
        #expect(installation.platform == .apns && installation.handle == Self.token && installation.tags == ["sports", "vip"])
        #expect(installation.owner == NHInstallationDocument.hubOwner)
        let template = try #require(installation.templates.first)
        #expect(template.name == "alert" && template.headers == ["apns-priority": "10"] && template.missing == .empty)
        // Written back as NH answers, then read again: the same registration.
        let kind = try #require(NHRegistrationDescription.kind(of: installation))
        let entry = NHRegistrationDescription.entry(installation, kind: kind, url: "https://h/shop/registrations/r-1?api-version=2015-01")
        #expect(
            entry.contains("<ETag>1000</ETag><ExpirationTime>")
                && entry.contains("<RegistrationId>r-1</RegistrationId><Tags>sports,vip</Tags>"))
        #expect(try NHRegistrationDescription.installation(NHXML.parse(Array(entry.utf8)), id: "r-1", updatedAt: 1_000) == installation)
    }

    @Test func theDotNetSDKsBaseTypeWithItsConcreteType() throws {
        let installation = try Self.installation(
            #"<RegistrationDescription \#(Self.connect) i:type="FcmV1RegistrationDescription"><RegistrationId i:nil="true"/>"#
                + "<Tags>android</Tags><FcmV1RegistrationId>tok-1</FcmV1RegistrationId></RegistrationDescription>")
        #expect(installation.platform == .fcm && installation.handle == "tok-1" && installation.templates.isEmpty)
        #expect(NHRegistrationDescription.kind(of: installation)?.element == "FcmV1RegistrationDescription")
    }

    @Test func aBrowserRegistrationCarriesItsKeys() throws {
        let installation = try Self.installation(
            "<BrowserRegistrationDescription \(Self.connect)><Endpoint>https://push.example.com/s/1</Endpoint>"
                + "<P256DH>\(NHInstallationDocumentTests.p256dh)</P256DH><Auth>\(NHInstallationDocumentTests.auth)</Auth>"
                + "</BrowserRegistrationDescription>")
        #expect(installation.platform == .webpush && installation.webPushKeys?.auth == NHInstallationDocumentTests.auth)
    }

    @Test func ifMatchAsTheSDKsSendIt() throws {
        let installation = try Self.installation(
            "<GcmRegistrationDescription \(Self.connect)><GcmRegistrationId>t</GcmRegistrationId></GcmRegistrationDescription>")
        for header in [nil, "*", "\"*\"", "\"1000\"", "W/\"1000\"", "1000"] as [String?] {
            #expect(NHRegistrationDescription.matches(header, installation), "\(header ?? "none")")
        }
        #expect(!NHRegistrationDescription.matches("\"999\"", installation))
        #expect(!NHRegistrationDescription.matches("*", nil), "`*` needs a registration to match")
    }

    @Test(arguments: [
        ("<WindowsRegistrationDescription/>", "not served"),
        ("<RegistrationDescription i:type=\"MpnsRegistrationDescription\" \(connect)/>", "not served"),
        ("<AppleRegistrationDescription \(connect)><Tags>a</Tags></AppleRegistrationDescription>", "needs DeviceToken"),
        (
            "<AppleRegistrationDescription \(connect)><Tags>a b</Tags><DeviceToken>t</DeviceToken></AppleRegistrationDescription>",
            "may only hold"
        ),
        (
            "<AppleTemplateRegistrationDescription \(connect)><DeviceToken>t</DeviceToken></AppleTemplateRegistrationDescription>",
            "needs BodyTemplate"
        ),
        (
            "<AppleTemplateRegistrationDescription \(connect)><DeviceToken>t</DeviceToken><BodyTemplate>{}</BodyTemplate><Expiry>next week</Expiry></AppleTemplateRegistrationDescription>",
            "expiry is a W3C date-time"
        ),
        (
            "<AppleRegistrationDescription \(connect)><RegistrationId>other</RegistrationId><DeviceToken>t</DeviceToken></AppleRegistrationDescription>",
            "the id in the URL"
        ),
        ("<BrowserRegistrationDescription \(connect)><Endpoint>https://p.example/1</Endpoint></BrowserRegistrationDescription>", "P256DH"),
    ])
    func refusals(description: String, words: String) {
        #expect {
            _ = try Self.installation(description)
        } throws: { error in
            if let error = error as? NHError { return error.status == 400 && error.message.contains(words) }
            if let error = error as? APIError { return error.status.code == 400 && error.message.contains(words) }
            return false
        }
    }
}
