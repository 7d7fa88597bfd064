import Testing

@testable import RichPushNH

@Suite("NH connection strings")
struct NHConnectionStringTests {
    @Test func readAsTheSDKsReadThem() throws {
        let portal = "Endpoint=sb://hub.example.com:8443/;SharedAccessKeyName=DefaultFullSharedAccessSignature;SharedAccessKey=abc+/="
        let parsed = try NHConnectionString(parsing: portal)
        #expect(parsed.endpoint == "sb://hub.example.com:8443/" && parsed.keyName == "DefaultFullSharedAccessSignature")
        #expect(parsed.key == "abc+/=", "a key's '=' stays: a part is split at its first '='")
        #expect(parsed.httpsEndpoint == "https://hub.example.com:8443/")
        #expect(parsed.description == portal, "printed in the portal's order, which notificationhubs-rest-python needs")
        let reordered = try NHConnectionString(
            parsing:
                " SharedAccessKey=abc+/= ; EntityPath=shop;Endpoint=sb://hub.example.com:8443;SharedAccessKeyName=DefaultFullSharedAccessSignature;"
        )
        #expect(reordered.endpoint == parsed.endpoint && reordered.key == parsed.key && reordered.entityPath == "shop")
    }

    @Test(arguments: [
        ("SharedAccessKeyName=n;SharedAccessKey=k", "Endpoint is missing"),
        ("Endpoint=http://h/;SharedAccessKeyName=n;SharedAccessKey=k", "Endpoint must be sb://host[:port]/"),
        ("Endpoint=sb://h/;SharedAccessKey=k", "SharedAccessKeyName is missing"),
        ("Endpoint=sb://h/;SharedAccessKeyName=n", "SharedAccessKey is missing"),
        ("Endpoint=sb://h/;Endpoint=sb://g/;SharedAccessKeyName=n;SharedAccessKey=k", "Endpoint is given twice"),
        ("Endpoint=sb://h/;SharedAccessKeyName=n;SharedAccessKey=k;junk", "'junk' is not name=value"),
    ])
    func aBadOneSaysWhatIsWrong(text: String, problem: String) {
        #expect(throws: NHError(status: 400, code: "InvalidConnectionString", message: "the connection string is not valid: \(problem)")) {
            try NHConnectionString(parsing: text)
        }
    }

    @Test func anOverlongOneIsRefusedUnread() {
        #expect(throws: NHError.self) { try NHConnectionString(parsing: String(repeating: ";", count: NHConnectionString.maxBytes + 1)) }
    }
}
