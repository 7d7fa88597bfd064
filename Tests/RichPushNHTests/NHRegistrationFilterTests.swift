import Testing

@testable import RichPushNH

@Suite("NH registration filters")
struct NHRegistrationFilterTests {
    @Test(arguments: [
        ("ChannelUri eq 'abc'", ["ABC", "abc"]),
        ("ChannelUri+eq+'abc'", ["ABC", "abc"]),
        ("DeviceToken eq 'C1D2'", ["C1D2", "c1d2"]),
        ("FcmV1RegistrationId eq 'tok:A-1'", ["tok:A-1"]),
        ("GcmRegistrationId eq 'it''s'", ["it's"]),
        ("Endpoint eq 'https://p.example/1' and P256DH eq 'x' and Auth eq 'y'", ["https://p.example/1"]),
    ])
    func handles(filter: String, handles: [String]) throws {
        #expect(try NHRegistrationFilter.handles(filter) == handles)
    }

    @Test(arguments: ["Tags eq 'a'", "DeviceToken eq 'abc", "DeviceToken eq ''", "DeviceToken", String(repeating: "x", count: 5000)])
    func refusals(filter: String) {
        #expect(throws: NHError.self) { try NHRegistrationFilter.handles(filter) }
    }

    @Test func anAPNsTokenIsLookedUpInBothCasesAnyOtherHandleAsGiven() {
        #expect(NHRegistrationFilter.lookups(for: "AbC1") == ["ABC1", "AbC1", "abc1"])
        #expect(NHRegistrationFilter.lookups(for: "fcm:Token-1") == ["fcm:Token-1"], "an FCM token's case is its own")
        #expect(NHRegistrationFilter.lookups(for: "https://push.example/Ab") == ["https://push.example/Ab"])
    }
}
