import APITestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushCore
import RichPushStorage
import Testing

/// `/console/templates`: the API's own preview behind the console's session, same-origin check
/// and app scope; bounded input, each problem a 400 naming it.
@Suite("Console template preview")
struct ConsoleTemplateTests {
    static let template = ##"{"aps":{"alert":".(title, 10)","badge":"#(n)"},"s":"$(sub)"}"##
    /// `template` as a JSON string, for the API's body.
    static let quotedTemplate = ##""{\"aps\":{\"alert\":\".(title, 10)\",\"badge\":\"#(n)\"},\"s\":\"$(sub)\"}""##
    static let properties = #"{"title": {"en": "Hello world again", "fr": "Bonjour tout le monde"}, "n": "4", "sub": "<b>bold"}"#

    @Test func thePreviewRendersAsTheAPIRendersIt() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let bob = try await client.consoleSignIn("bob")  // a viewer: a preview changes nothing
                let api = try await client.execute(
                    uri: "/api/templates/render", method: .post,
                    headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: ByteBuffer(
                        string: #"{"template": "# + Self.quotedTemplate + #", "properties": "#
                            + Self.properties + #", "locale": "fr_CA"}"#))
                #expect(api.status == .ok, "\(String(buffer: api.body))")
                let form = [("app", "default"), ("template", Self.template), ("properties", Self.properties), ("locale", "fr_CA")]
                let console = try await client.consolePost("/console/templates", session: bob, form)
                #expect(console.status == .ok, "\(String(buffer: console.body))")
                #expect(String(buffer: console.body) == String(buffer: api.body), "the same answer, byte for byte")
                #expect(console.json["locale"] as? String == "fr")
                #expect((console.json["warnings"] as? [[String: Any]])?.first?["code"] as? String == "truncated")
                // The page: the output shown as text (escaped), the locale, the platforms' limits.
                let page = try await client.consolePost("/console/templates", session: bob, form, headers: ConsoleFixture.browser)
                let html = String(buffer: page.body)
                #expect(page.status == .ok)
                #expect(
                    html.contains(
                        #"<pre class="json" id="output">{&quot;aps&quot;:{&quot;alert&quot;:&quot;Bonjour...&quot;,&quot;badge&quot;:4}"#),
                    "\(html)")
                #expect(html.contains("bold") && !html.contains("<b>bold"), "the output as text")
                #expect(html.contains("<strong>fr</strong>") && html.contains("<th scope=\"row\">APNs</th><td>4096</td><td>fits</td>"))
                #expect(html.contains("<code>truncated</code>"))
                let blank = String(buffer: try await client.consoleGet("/console/templates", session: bob, html: true).body)
                #expect(
                    blank.contains(#"<form method="post" action="/console/templates""#)
                        && blank.contains(#"<a href="/console/templates">Templates</a>"#))
            }
        }
    }

    @Test func anInstallationsTemplateIsRenderedWithItsOwnPolicy() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let templates: [String: Any] = [
                    "quiet": ["Body": #"{"aps":{"content-available":1},"t":"$(title)"}"#, "Defaults": ["title": "News"]]
                ]
                let registered = try await client.execute(
                    uri: "/api/register/t1", method: .put,
                    headers: APIFixture.basic("alice") + [.contentType: "application/json"],
                    body: APIFixture.json(["Platform": "apns", "Handle": "h1", "Templates": templates]))
                #expect(registered.status == .ok, "\(String(buffer: registered.body))")
                let alice = try await client.consoleSignIn("alice")
                let shown = try await client.consolePost(
                    "/console/templates", session: alice, [("installation", "t1"), ("name", "quiet"), ("properties", "{}")])
                #expect(shown.status == .ok, "\(String(buffer: shown.body))")
                #expect(((shown.json["output"] as? [String: Any])?["t"]) as? String == "News", "the template's own defaults")
                let unknown = try await client.consolePost(
                    "/console/templates", session: alice, [("installation", "t1"), ("name", "loud")])
                #expect(unknown.status == .notFound && unknown.errorCode == "template_not_found")
                let both = try await client.consolePost(
                    "/console/templates", session: alice, [("installation", "t1"), ("name", "quiet"), ("template", "{}")])
                #expect(both.status == .badRequest && both.errorCode == "bad_template_source")
            }
        }
    }

    @Test func badInputIs400NamingTheProblemAndAnotherAppIs403() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys)
                .setConsoleAccess(name: "bob", ConsoleAccess(role: .viewer, apps: ["news"]))
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
                let cases: [([(String, String)], String, String)] = [
                    ([("properties", "{}")], "missing_field", "template"),
                    ([("template", Self.template), ("properties", "{not json")], "bad_properties", "properties"),
                    ([("template", Self.template), ("properties", #"["a"]"#)], "bad_properties", "properties"),
                    ([("template", Self.template), ("properties", #"{"a": "# + deep + "}")], "bad_properties", "nested at most 4"),
                    ([("template", String(repeating: "x", count: 9_000))], "field_too_long", "template"),
                    ([("template", Self.template), ("properties", String(repeating: "x", count: 17_000))], "field_too_long", "properties"),
                    ([("template", #"{"a": "$(x"}"#)], "invalid_template", "invalid"),
                    ([("template", Self.template), ("locale", "not a locale!")], "", "locale"),
                    ([("template", Self.template), ("app", "Bad App!")], "bad_app_id", "app"),
                ]
                for (form, code, words) in cases {
                    let response = try await client.consolePost("/console/templates", session: alice, form)
                    #expect(response.status == .badRequest, "\(form.map(\.0)): \(String(buffer: response.body).prefix(300))")
                    if !code.isEmpty { #expect(response.errorCode == code, "\(String(buffer: response.body).prefix(300))") }
                    #expect(String(buffer: response.body).contains(words), "\(String(buffer: response.body).prefix(300))")
                }
                // Near the bounds, percent-encoded to three times their size: still a form the preview takes.
                let quotes =
                    #"{"sub": ""# + String(repeating: "\"", count: 8_000).replacingOccurrences(of: "\"", with: "\\\"")
                    + #"", "title": "t", "n": "1"}"#
                #expect(quotes.utf8.count > 16_000 && quotes.utf8.count <= 16_384)
                let large = try await client.consolePost(
                    "/console/templates", session: alice, [("template", Self.template), ("properties", quotes)])
                #expect(large.status == .ok, "\(String(buffer: large.body).prefix(300))")
                let tooLarge = try await client.execute(
                    uri: "/console/templates", method: .post, headers: ConsoleFixture.script + alice,
                    body: ByteBuffer(string: "template=" + String(repeating: "%22", count: 30_000)))
                #expect(tooLarge.status == .contentTooLarge)
                let missing = try await client.consolePost(
                    "/console/templates", session: alice, [("template", Self.template), ("missing", "fail")])
                #expect(missing.status == .unprocessableContent && missing.errorCode == "template_missing_property")
                // The page shows the problem above the form, the form kept as sent (escaped).
                let page = try await client.consolePost(
                    "/console/templates", session: alice, [("template", "<b>{"), ("properties", "{")],
                    headers: ConsoleFixture.browser)
                let html = String(buffer: page.body)
                #expect(page.status == .badRequest)
                #expect(html.contains(#"id="preview-problem""#) && html.contains("properties: a JSON object"))
                #expect(html.contains("&lt;b&gt;{</textarea>") && !html.contains("<b>{"))
                // bob sees news only; a cross-site post is refused before anything is read.
                let bob = try await client.consoleSignIn("bob")
                let other = try await client.consolePost(
                    "/console/templates", session: bob, [("app", "default"), ("template", Self.template)])
                #expect(other.status == .forbidden && other.errorCode == "console_forbidden")
                let own = try await client.consolePost(
                    "/console/templates", session: bob,
                    [("app", "news"), ("template", Self.template), ("properties", #"{"title": "x", "n": "1", "sub": "y"}"#)])
                #expect(own.status == .ok, "\(String(buffer: own.body))")
                var crossSite = ConsoleFixture.script
                crossSite[.origin] = "https://evil.example"
                let forged = try await client.consolePost(
                    "/console/templates", session: alice, [("template", Self.template)], headers: crossSite)
                #expect(forged.status == .forbidden && forged.errorCode == "cross_site_request")
                let anonymous = try await client.consolePost("/console/templates", session: [:], [("template", Self.template)])
                #expect(anonymous.status == .unauthorized)
            }
        }
    }
}
