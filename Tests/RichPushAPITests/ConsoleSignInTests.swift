import APITestSupport
import Foundation
import HTTPTypes
import Hiredis
import HummingbirdBcrypt
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import RichPushAPI
import RichPushCore
import RichPushStorage
import Testing

/// The console's sign-in, sessions and the checks every change passes: CSRF, roles, read-only.
@Suite("Console sign-in and guards")
struct ConsoleSignInTests {
    @Test func signInSetsAStrictHttpOnlyCookieWhoseHashAloneIsStored() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let response = try await client.execute(
                    uri: "/console/login", method: .post, headers: ConsoleFixture.browser,
                    body: ConsoleFixture.form([("user", "alice"), ("password", "alice-pw")]))
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/console")
                let cookie = try #require(response.headers[.setCookie])
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/console"))
                #expect(!cookie.contains("Secure"), "plain HTTP with no trusted proxy saying https")
                let token = String(cookie.prefix { $0 != ";" }.dropFirst("rp_console=".count))
                #expect(token.count == 43, "256 random bits, base64url")
                let keys = (try await fixture.api.redis.send("KEYS", "\(fixture.api.keys.prefix):console:session:*").array ?? [])
                    .compactMap(\.string)
                #expect(keys.count == 1 && !keys[0].contains(token), "the token is not in Redis")
                #expect(
                    keys.first?.split(separator: ":").last.map { $0.count == 64 && $0.allSatisfy(\.isHexDigit) } == true, "its SHA-256 is")
                #expect(try await fixture.api.redis.send("PTTL", keys[0]).int.map { $0 > 0 && $0 <= 8 * 3_600_000 } == true)
                let overview = try await client.consoleGet("/console", session: [.cookie: "rp_console=\(token)"], html: true)
                #expect(overview.status == .ok)
                #expect(String(buffer: overview.body).contains("<h1>Overview</h1>"))
                #expect(overview.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                #expect(overview.headers[.cacheControl] == "no-store")
            }
        }
    }

    @Test func theCookieIsSecureBehindATrustedTLSProxyOrWhenAlwaysAsked() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server) { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1") }
            try await fixture.api.test { client in
                var headers = ConsoleFixture.script
                headers[.origin] = "https://localhost"
                headers[HTTPField.Name("X-Forwarded-Proto")!] = "https"
                let response = try await client.execute(
                    uri: "/console/login", method: .post, headers: headers,
                    body: ConsoleFixture.form([("user", "alice"), ("password", "alice-pw")]))
                #expect(response.status == .ok)
                #expect(response.headers[.setCookie]?.hasSuffix("; Secure") == true)
            }
            let always = try await ConsoleFixture(server: server) { $0.console.secureCookie = .always }
            try await always.api.test { client in
                var headers = ConsoleFixture.script
                headers[.origin] = "https://localhost"
                let response = try await client.execute(
                    uri: "/console/login", method: .post, headers: headers,
                    body: ConsoleFixture.form([("user", "alice"), ("password", "alice-pw")]))
                #expect(response.headers[.setCookie]?.hasSuffix("; Secure") == true)
            }
        }
    }

    @Test func wrongPasswordsAndUsersWithoutARoleAreRefused() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).create(
                User(name: "carol", role: .admin), passwordHash: Bcrypt.hash("carol-pw", cost: 4))
            try await fixture.api.test { client in
                let wrong = try await client.consolePost("/console/login", session: [:], [("user", "alice"), ("password", "nope")])
                #expect(wrong.status == .unauthorized)
                #expect(wrong.headers[.wwwAuthenticate] == nil, "a browser must not pop up a Basic dialog")
                let page = try await client.consolePost(
                    "/console/login", session: [:], [("user", "alice"), ("password", "nope")], headers: ConsoleFixture.browser)
                #expect(page.status == .unauthorized)
                #expect(String(buffer: page.body).contains("wrong user name or password"))
                let noRole = try await client.consolePost("/console/login", session: [:], [("user", "carol"), ("password", "carol-pw")])
                #expect(noRole.status == .forbidden)
                #expect(noRole.errorCode == "no_console_role")
                #expect(noRole.headers[.setCookie] == nil)
                let missing = try await client.consolePost("/console/login", session: [:], [("user", "alice")])
                #expect(missing.status == .badRequest)
                // Guessing is throttled by the API's own login throttle: 5 free failures per (user, address).
                // (Each delay doubles from 1 s, so even a slow machine meets one within 20 guesses.)
                var statuses: [HTTPResponse.Status] = []
                while statuses.count < 20, statuses.last != .tooManyRequests {
                    statuses.append(
                        try await client.consolePost("/console/login", session: [:], [("user", "bob"), ("password", "guess")]).status)
                }
                #expect(statuses.last == .tooManyRequests && statuses.count >= 6, "\(statuses)")
                let unauthenticated = try await client.execute(uri: "/console", method: .get, headers: [.accept: "text/html"])
                #expect(unauthenticated.status == .seeOther)
                #expect(unauthenticated.headers[.location] == "/console/login")
                let script = try await client.execute(
                    uri: "/console/overview.json", method: .get, headers: [.cookie: "rp_console=" + String(repeating: "A", count: 43)])
                #expect(script.status == .unauthorized)
                #expect(script.errorCode == "console_sign_in")
            }
        }
    }

    @Test func aViewerSeesPagesButEveryChangeIs403() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.addDeadLetter(app: "default", error: "timeout")
            try await fixture.api.test { client in
                let bob = try await client.consoleSignIn("bob")
                let page = try await client.consoleGet("/console/dead-letters", session: bob, html: true)
                #expect(page.status == .ok)
                let html = String(buffer: page.body)
                #expect(
                    html.contains("timeout") && !html.contains("Replay") && !html.contains("type=\"checkbox\""),
                    "no action buttons for a viewer")
                for (path, pairs) in [
                    ("/console/dead-letters/count", [("app", "default")]), ("/console/dead-letters/replay", [("id", "q0/1-0")]),
                ] {
                    let json = try await client.consolePost(path, session: bob, pairs)
                    #expect(json.status == .forbidden, "\(path)")
                    #expect(json.errorCode == "console_forbidden", "\(path)")
                    let browser = try await client.consolePost(path, session: bob, pairs, headers: ConsoleFixture.browser)
                    #expect(browser.status == .forbidden)
                    #expect(browser.headers[.contentType] == "text/html; charset=utf-8")
                    #expect(String(buffer: browser.body).contains("may not do this"))
                }
                let audit = try await client.consoleGet("/console/audit", session: bob)
                #expect(audit.status == .forbidden)
                #expect(try await fixture.deadLetterIDs().count == 1, "nothing was replayed")
                let root = try await client.consoleSignIn("root")
                let entries = try #require(try await client.consoleGet("/console/audit", session: root).json["entries"] as? [[String: Any]])
                let refusals = entries.filter { $0["user"] as? String == "bob" && $0["outcome"] as? String == "refused: console_forbidden" }
                #expect(
                    Set(refusals.compactMap { $0["action"] as? String }) == ["dlq.count", "dlq.replay"], "a refused change is audited too")
                let alice = try await client.consoleSignIn("alice")
                let operatorPage = String(buffer: try await client.consoleGet("/console/dead-letters", session: alice, html: true).body)
                #expect(operatorPage.contains("Replay selected") && operatorPage.contains("type=\"checkbox\""))
            }
        }
    }

    @Test func changesFromAnotherSiteAreRefused() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.addDeadLetter(app: "default", error: "timeout")
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                let cases: [(String, HTTPFields)] = [
                    ("cross-site Origin", [.origin: "http://evil.example"]),
                    ("Origin of another port", [.origin: "http://localhost:8081"]),
                    ("Origin null", [.origin: "null"]),
                    ("no Origin, Sec-Fetch-Site cross-site", [ConsoleGuardHeaders.secFetchSite: "cross-site"]),
                    (
                        "same Origin but Sec-Fetch-Site same-site",
                        [.origin: ConsoleFixture.origin, ConsoleGuardHeaders.secFetchSite: "same-site"]
                    ),
                    ("neither header", [:]),
                ]
                for (name, headers) in cases {
                    let all = headers + [.accept: "application/json", .contentType: "application/x-www-form-urlencoded"]
                    for path in ["/console/dead-letters/count", "/console/logout"] {
                        let response = try await client.execute(
                            uri: path, method: .post, headers: all + alice, body: ConsoleFixture.form([("app", "default")]))
                        #expect(response.status == .forbidden, "\(name) \(path)")
                        #expect(response.errorCode == "cross_site_request", "\(name) \(path)")
                    }
                    let login = try await client.execute(
                        uri: "/console/login", method: .post, headers: all,
                        body: ConsoleFixture.form([("user", "alice"), ("password", "alice-pw")]))
                    #expect(login.status == .forbidden, "login: \(name)")
                }
                // A browser that sends only Sec-Fetch-Site: same-origin is let through.
                let sameOrigin = try await client.execute(
                    uri: "/console/dead-letters/count", method: .post,
                    headers: alice + [
                        ConsoleGuardHeaders.secFetchSite: "same-origin", .accept: "application/json",
                        .contentType: "application/x-www-form-urlencoded",
                    ],
                    body: ConsoleFixture.form([("app", "default")]))
                #expect(sameOrigin.status == .ok)
                #expect(sameOrigin.json["count"] as? Int == 1)
            }
        }
    }

    @Test func signOutAndExpiryEndTheSession() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server)
            try await fixture.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                #expect(try await client.consoleGet("/console/overview.json", session: alice).status == .ok)
                let out = try await client.consolePost("/console/logout", session: alice, [])
                #expect(out.status == .ok)
                #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
                #expect(try await client.consoleGet("/console/overview.json", session: alice).status == .unauthorized)
                // A new password, or the console role taken away, ends the user's sessions.
                let again = try await client.consoleSignIn("alice")
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).update(
                    name: "alice", passwordHash: Bcrypt.hash("new-pw", cost: 4), role: nil)
                #expect(try await client.consoleGet("/console/overview.json", session: again).status == .unauthorized)
                let bob = try await client.consoleSignIn("bob")
                _ = try await RedisUserStore(redis: fixture.api.redis, keys: fixture.api.keys).setConsoleAccess(name: "bob", nil)
                #expect(try await client.consoleGet("/console/overview.json", session: bob).status == .unauthorized)
            }
            let short = try await ConsoleFixture(server: server) { $0.console.sessionLifetime = .milliseconds(300) }
            try await short.api.test { client in
                let alice = try await client.consoleSignIn("alice")
                try await waitUntil(timeout: .seconds(30), "the session to expire") {
                    try await client.consoleGet("/console/overview.json", session: alice).status == .unauthorized
                }
                let keys = try await short.api.redis.send("KEYS", "\(short.api.keys.prefix):console:session:*").array ?? []
                #expect(keys.isEmpty, "Redis expired the session's key")
            }
        }
    }

    @Test func theReadOnlySwitchRefusesEveryAction() async throws {
        try await withRedisServer { server in
            let fixture = try await ConsoleFixture(server: server) { $0.console.readOnly = true }
            try await fixture.addDeadLetter(app: "default", error: "timeout")
            try await fixture.api.test { client in
                let root = try await client.consoleSignIn("root")
                let page = String(buffer: try await client.consoleGet("/console/dead-letters", session: root, html: true).body)
                #expect(page.contains("Read-only") && !page.contains("Replay selected"))
                for (path, pairs) in [
                    ("/console/dead-letters/count", [("app", "default")]), ("/console/dead-letters/replay", [("id", "q0/1-0")]),
                ] {
                    let response = try await client.consolePost(path, session: root, pairs)
                    #expect(response.status == .forbidden)
                    #expect(response.errorCode == "console_read_only")
                }
                #expect(try await client.consoleGet("/console/audit", session: root).status == .ok, "reading stays open")
                #expect(try await client.consolePost("/console/logout", session: root, []).status == .ok, "and signing out")
                #expect(try await fixture.deadLetterIDs().count == 1)
            }
        }
    }
}

enum ConsoleGuardHeaders {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}
