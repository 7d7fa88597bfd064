import RichPushCore
import Testing

@Suite("Template expiry (W3C date-times)")
struct TemplateExpiryTests {
    @Test(
        arguments: [
            ("2026-12-24", 1_798_070_400_000), ("2026-12-24T18:00Z", 1_798_135_200_000), ("2026-12-24T18:00:00Z", 1_798_135_200_000),
            ("2026-12-24T19:30+01:30", 1_798_135_200_000), ("2026-12-24T18:00:00.5Z", 1_798_135_200_500),
            ("2026-12-24T18:00:00.1234567Z", 1_798_135_200_123), ("2026-12-24T16:00:00-02:00", 1_798_135_200_000),
            ("2024-02-29T00:00Z", 1_709_164_800_000),
        ] as [(String, Int64)])
    func w3cDateTimes(text: String, milliseconds: Int64) {
        #expect(W3CDateTime.milliseconds(text) == milliseconds)
    }

    @Test(arguments: [
        "", "tomorrow", "2026-12-24T18:00", "2026-12-24T18:00:00", "2026-12-24 18:00Z", "2026-13-01", "2025-02-29", "2026-04-31T00:00Z",
        "2026-12-24T24:00Z", "2026-12-24T18:60Z", "2026-12-24T18:00:60Z", "2026-12-24T18:00+0100", "2026-12-24T18:00Zjunk", "0000-01-01",
        "2026-12-24T18:00:00.Z",
    ])
    func notW3CDateTimes(text: String) {
        #expect(W3CDateTime.milliseconds(text) == nil)
    }

    @Test func anExpirySetsThePushsDeadlineAndAnEmptyOneNone() {
        var push = RenderedPush(payload: [], pushType: "alert", priority: 10, expiration: 0, collapseID: "x")
        #expect(TemplateExpiry.apply(" ", to: &push) == nil && push.deadline == 0 && push.expiration == 0)
        #expect(TemplateExpiry.apply("2026-12-24T18:00:00.5Z", to: &push) == nil)
        #expect(push.deadline == 1_798_135_200_500 && push.expiration == 1_798_135_201, "APNs' seconds rounded up")
        #expect(TemplateExpiry.apply("soon", to: &push)?.hasPrefix("expiry is a W3C date-time") == true)
    }
}
