import Foundation
import RichPushCore
import Testing

@testable import RichPushAPI

/// The console's escaping, form parsing and filter times, without a server.
@Suite("Console HTML and forms")
struct ConsoleHTMLTests {
    @Test func interpolatedStringsAreEscapedAndMarkupIsNot() {
        let value = #"<script>alert("x")</script> & 'quoted'"#
        let html: HTML = "<td title=\"\(value)\">\(value)</td>\(HTML(trusted: "<br>"))\(42)"
        #expect(
            html.text == "<td title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;\">"
                + "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;</td><br>42")
        #expect(HTML.escape("plain ünïcode ✓") == "plain ünïcode ✓")
        #expect(HTML.query([("text", "a b&c=d/é"), ("empty", "")]) == "text=a%20b%26c%3Dd%2F%C3%A9")
    }

    @Test func formsAreDecodedAndBounded() throws {
        let form = try ConsoleForm(encoded: "user=al%69ce&password=a+b%2Bc&id=q0%2F1-0&id=q0%2F2-0&empty=")
        #expect(form["user"] == "alice")
        #expect(form.fields.first { $0.name == "password" }?.value == "a b+c")
        #expect(form.all("id") == ["q0/1-0", "q0/2-0"])
        #expect(form["empty"] == nil && form["missing"] == nil)
        for bad in ["a=%", "a=%zz", "a=%ff%fe", "a=%C3"] {
            #expect(throws: APIError.self, "\(bad)") { try ConsoleForm(encoded: Substring(bad)) }
        }
        #expect(throws: APIError.self) { try ConsoleForm(encoded: Substring(Array(repeating: "a=b", count: 601).joined(separator: "&"))) }
        #expect(throws: APIError.self) { try ConsoleForm(encoded: Substring("a=" + String(repeating: "x", count: 257))) }
        #expect(throws: APIError.self) { try ConsoleForm(encoded: Substring(String(repeating: "x", count: ConsoleForm.maxBytes + 1))) }
    }

    @Test func filterTimesAreAbsoluteOnceRead() throws {
        let now: Int64 = 1_800_000_000_000
        #expect(try DeadLetterFilter.time("-15m", name: "from", now: now) == now - 900_000)
        #expect(try DeadLetterFilter.time("-2h", name: "from", now: now) == now - 7_200_000)
        #expect(try DeadLetterFilter.time("-7d", name: "from", now: now) == now - 604_800_000)
        #expect(try DeadLetterFilter.time("1795308773734", name: "from", now: now) == 1_795_308_773_734)
        #expect(try DeadLetterFilter.time("2026-11-26T17:00:00Z", name: "from", now: now) == 1_795_712_400_000)
        #expect(try DeadLetterFilter.time("2026-11-26T17:00", name: "from", now: now) == 1_795_712_400_000, "no zone: UTC")
        for bad in ["yesterday", "-5y", "-h", "2026-13-01T00:00:00Z", ""] {
            #expect(throws: APIError.self, "\(bad)") { try DeadLetterFilter.time(bad, name: "from", now: now) }
        }
        let access = ConsoleAccess(role: .operator, apps: ["shop"])
        let filter = try DeadLetterFilter(ConsoleForm(fields: [("from", "-1h"), ("reason", "timeout")]), access: access, now: now)
        #expect(filter.from == now - 3_600_000 && filter.scope == ["shop"])
        #expect(filter.summary.contains("reason~timeout") && filter.summary.contains("scope=shop"))
        let decoded = try JSONDecoder().decode(DeadLetterFilter.self, from: JSONEncoder().encode(filter))
        #expect(decoded == filter, "a confirmation carries the filter as it was counted")
    }

    @Test func liveStreamSlotsAreBoundedAndComeBackWhenReleased() {
        let slots = LiveStreamSlots(limit: 2)
        var held = [slots.take(), slots.take()]
        #expect(held.allSatisfy { $0 != nil } && slots.take() == nil && slots.inUse == 2)
        held.removeLast()
        #expect(slots.inUse == 1)
        let again = slots.take()
        #expect(again != nil && slots.inUse == 2)
        held.removeAll()
        _ = again
    }

    @Test func rolesAreOrderedAndScopesParsed() {
        #expect(ConsoleAccess.Role.viewer < .operator && ConsoleAccess.Role.operator < .admin)
        #expect(ConsoleAccess(stored: "operator", apps: "shop,news")?.apps == ["news", "shop"])
        #expect(ConsoleAccess(stored: "operator", apps: "")?.apps == nil)
        #expect(ConsoleAccess(stored: "root", apps: nil) == nil && ConsoleAccess(stored: nil, apps: "shop") == nil)
        #expect(ConsoleAccess(role: .viewer, apps: ["default"]).sees(app: "_"), "jobs naming no app are the default app's")
        #expect(!ConsoleAccess(role: .viewer, apps: ["shop"]).sees(app: "news"))
        if case .success = ConsoleAccess.parseApps("shop,Bad") { Issue.record("Bad is not an app id") }
        if case .success = ConsoleAccess.parseApps(Array(repeating: "ab", count: 101).joined(separator: ",")) {
            Issue.record("at most 100 apps")
        }
    }
}
