import Foundation
import RichPushCore
import Testing

@Suite("Webhook model")
struct WebhookModelTests {
    @Test func timestampsMatchFoundationsISO8601() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let samples: [Int64] =
            [0, 1, 999, 86_399_999, 951_782_400_000, 1_709_164_800_123, 4_102_444_799_999]
            + (0..<200).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for milliseconds in samples {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            #expect(UTCTimestamp.iso8601(milliseconds: milliseconds) == expected, "\(milliseconds)")
        }
    }

    @Test func urlsAreCheckedBeforeTheyAreStored() {
        let accepted = [
            "https://hooks.example.com/a?b=c", "http://example.com:8080/x", "https://[2001:db8::1]/hook", "https://172.32.0.1/x",
        ]
        for url in accepted { #expect(WebhookURL.problem(with: url, allowPrivate: false) == nil, "\(url)") }
        let refused = [
            "", "example.com/x", "ftp://example.com/", "https://", "https://u:p@example.com/", "https://exa mple.com/",
            "http://127.0.0.1/", "http://127.1.2.3:80/", "http://LOCALHOST/", "http://api.localhost/", "http://10.0.0.1/",
            "http://172.16.0.1/", "http://192.168.1.1/", "http://100.64.0.1/", "http://0.0.0.0/", "http://[::1]/", "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/", "http://[fe80::1]/",
        ]
        for url in refused { #expect(WebhookURL.problem(with: url, allowPrivate: false) != nil, "\(url)") }
        #expect(WebhookURL.problem(with: "http://127.0.0.1:9000/hook", allowPrivate: true) == nil)
        #expect(WebhookURL.problem(with: "http://169.254.169.254/", allowPrivate: true) != nil)
        #expect(WebhookURL.problem(with: "http://[fe80::1%25eth0]/", allowPrivate: true) != nil)
    }

    @Test func aWebhookHearsItsOwnersNotificationsOrEveryonesWhenAllUsers() {
        var webhook = Webhook(
            id: "wh_0123456789abcdef", owner: "alice", url: "https://example.com", events: [.sent, .opened], allUsers: false,
            description: "", secret: "s", createdAt: 0)
        #expect(
            webhook.wants(.sent, creator: "alice") && !webhook.wants(.sent, creator: "bob") && !webhook.wants(.fetched, creator: "alice"))
        webhook.allUsers = true
        #expect(webhook.wants(.opened, creator: "bob"))
        #expect(Webhook.isValidID("wh_0123456789abcdef") && !Webhook.isValidID("wh_0123456789ABCDEF") && !Webhook.isValidID("wh_../../x"))
    }
}
