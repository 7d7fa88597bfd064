import RichPushCore
import RichPushNH
import Testing

@testable import RichPushAPI

@Suite("NH installation documents")
struct NHInstallationDocumentTests {
    static let token = String(repeating: "ab", count: 32)
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    static func parse(_ text: String, id: String = "dev-1") throws -> Installation {
        try NHInstallationDocument.installation(#require(JSONValue.parse(Array(text.utf8))), id: id, updatedAt: 1_000)
    }

    @Test func anAppleInstallationOfTheHub() throws {
        let installation = try Self.parse(
            #"{"installationId":"dev-1","platform":"APNS","pushChannel":"\#(Self.token)","tags":["sports","news","sports"],"#
                + #""templates":{"t1":{"body":"{\"aps\":{\"alert\":\"$(message)\"}}","headers":{"apns-priority":"10"},"tags":["vip"]}},"#
                + #""userId":null,"pushChannelExpired":null,"expirationTime":null}"#)
        #expect(installation.platform == .apns && installation.handle == Self.token)
        #expect(installation.owner == NHInstallationDocument.hubOwner, "no userId: the hub's")
        #expect(installation.tags == ["news", "sports"], "no user tag for the hub's")
        let template = try #require(installation.templates.first)
        #expect(template.name == "t1" && template.headers == ["apns-priority": "10"] && template.tags == ["vip"])
        #expect(template.missing == .empty, "NH renders a missing property as an empty string")
    }

    @Test func aUserIDMakesItTheUsersWithTheirTag() throws {
        let installation = try Self.parse(#"{"platform":"fcmv1","pushChannel":"tok-123","userId":"alice","tags":["news"]}"#)
        #expect(installation.platform == .fcm && installation.owner == "alice")
        #expect(installation.tags == ["news", "username:alice"])
        let document = NHInstallationDocument.document(installation)
        #expect(document["userId"] == .string("alice"))
        #expect(document["tags"] == .array([.string("news")]), "the user tag is NH's implicit $UserId, not listed")
        #expect(document["platform"] == .string("fcmv1") && document["pushChannel"] == .string("tok-123"))
    }

    @Test func aBrowserSubscriptionAsAnObjectOrAStringOfOne() throws {
        let channel = #"{"endpoint":"https://push.example.com/s/1","p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)"}"#
        let object = try Self.parse(#"{"platform":"browser","pushChannel":\#(channel)}"#)
        #expect(object.platform == .webpush && object.handle == "https://push.example.com/s/1")
        #expect(object.webPushKeys?.auth == Self.auth)
        let quoted = channel.replacingOccurrences(of: "\"", with: "\\\"")
        let string = try Self.parse(#"{"platform":"browser","pushChannel":"\#(quoted)"}"#)
        #expect(string == object, "the .NET SDK sends the subscription as a string holding its JSON")
        let document = NHInstallationDocument.document(object)
        #expect(document["pushChannel"]?["endpoint"] == .string("https://push.example.com/s/1"))
        #expect(document["platform"] == .string("browser"))
    }

    @Test func aTemplatesExpiryIsADateTimeOrAnExpression() throws {
        let installation = try Self.parse(
            #"{"platform":"apns","pushChannel":"t","templates":{"a":{"body":"{}","expiry":"2027-01-01T00:00Z"},"b":{"body":"{}","expiry":"$(until)"}}}"#
        )
        #expect(installation.templates.map(\.expiry) == ["2027-01-01T00:00Z", "$(until)"])
        let document = NHInstallationDocument.document(installation)
        #expect(document["templates"]?["b"]?["expiry"] == .string("$(until)"))
        #expect(try NHInstallationDocument.installation(document, id: "dev-1", updatedAt: 1_000) == installation)
    }

    @Test func whatGetShowsIsWhatPutTakesBack() throws {
        let installation = try Self.parse(
            #"{"platform":"gcm","pushChannel":"t","userId":"bob","tags":["a"],"templates":{"x":{"body":"{\"data\":{\"m\":\"$(m)\"}}"}}}"#)
        let document = NHInstallationDocument.document(installation)
        #expect(document["expirationTime"] == .string(NHInstallationDocument.never))
        #expect(document["lastUpdate"] == .string("1970-01-01T00:00:01.000Z"))
        #expect(try NHInstallationDocument.installation(document, id: "dev-1", updatedAt: 1_000) == installation)
    }

    @Test(arguments: [
        ("[]", "must be an installation"),
        (#"{"platform":"apns","pushChannel":"t","color":"red"}"#, "unknown field 'color'"),
        (#"{"installationId":"other","platform":"apns","pushChannel":"t"}"#, "the id in the URL"),
        (#"{"pushChannel":"t"}"#, "'platform'"),
        (#"{"platform":"wns","pushChannel":"t"}"#, "platform 'wns' is not served"),
        (#"{"platform":"apns"}"#, "'pushChannel' is required"),
        (#"{"platform":"apns","pushChannel":{"endpoint":"x"}}"#, "is a string, the device's token"),
        (#"{"platform":"browser","pushChannel":"not json"}"#, "is an object"),
        (#"{"platform":"apns","pushChannel":"t","tags":["a b"]}"#, "may only hold"),
        (#"{"platform":"apns","pushChannel":"t","tags":"a"}"#, "array of up to 60"),
        (#"{"platform":"apns","pushChannel":"t","userId":"a:b"}"#, "'userId'"),
        (#"{"platform":"apns","pushChannel":"t","expirationTime":"2027-01-01T00:00:00Z"}"#, "never expire"),
        (#"{"platform":"apns","pushChannel":"t","pushVariables":{"a":"b"}}"#, "'pushVariables' is not served"),
        (#"{"platform":"apns","pushChannel":"t","templates":{"x":{"body":"{}","expiry":"next week"}}}"#, "expiry is a W3C date-time"),
        (#"{"platform":"fcmv1","pushChannel":"t","templates":{"x":{"body":"{}","expiry":"2027-01-01"}}}"#, "android.ttl"),
        (#"{"platform":"apns","pushChannel":"t","templates":{"x":{"body":"{}","expiry":"$(e"}}}"#, "'Expiry'"),
        (#"{"platform":"apns","pushChannel":"t","templates":{"x":{"Body":"{}"}}}"#, "unknown field 'Body'"),
        (#"{"platform":"apns","pushChannel":"t","templates":{"x":{"body":"{\"a\":\"x $(m)\"}"}}}"#, "expression_mixed_with_text"),
    ])
    func refusals(text: String, words: String) {
        #expect {
            _ = try Self.parse(text)
        } throws: { error in
            if let error = error as? NHError { return error.status == 400 && error.message.contains(words) }
            if let error = error as? APIError { return error.status.code == 400 && error.message.contains(words) }
            return false
        }
    }
}
