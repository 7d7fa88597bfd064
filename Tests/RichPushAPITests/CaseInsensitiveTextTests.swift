import Foundation
import Testing

@testable import RichPushAPI

/// The console's filters find text in any case as Foundation's case-insensitive search does, on
/// the fast ASCII path and the Unicode fallback alike.
@Suite("Case-insensitive text of the console's filters")
struct CaseInsensitiveTextTests {
    @Test func findsWhatFoundationFinds() {
        let haystacks = [
            "APNs timeout after 10 s", "BadDeviceToken", "", "t", "Ünïcode Café", "straße", "KELVIN \u{212A}", "a\u{0}b",
            "xx-TIME-OUTtimeout",
        ]
        let needles = [
            "timeout", "TIMEOUT", "tImE", "token", "é", "CAFÉ", "ünï", "k", "kelvin", "out", "a\u{0}B", "xx-time-out", "s ", "zz", " ",
        ]
        for haystack in haystacks {
            for needle in needles {
                let expected = haystack.range(of: needle, options: .caseInsensitive) != nil
                let text = CaseInsensitiveText(needle)
                #expect(text.found(in: haystack) == expected, "\(needle) in \(haystack)")
                #expect(text.found(inUTF8: Array(haystack.utf8)) == expected, "\(needle) in the bytes of \(haystack)")
            }
        }
    }

    @Test func anEmptyTextIsFoundNowhereAsInFoundation() {
        #expect(!CaseInsensitiveText("").found(in: "anything"))
        #expect(!CaseInsensitiveText("").found(in: ""))
        #expect(!CaseInsensitiveText("a").found(in: ""))
    }
}
