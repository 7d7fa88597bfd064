import Foundation
import RedisTestSupport
import Testing

@testable import RichPushNH

/// SAS tokens as the two NH clients of issue 49 make them (docs/wip/nh-clients.md), written
/// again here in Python from their code, not by our own signer: notificationhubs-rest-python
/// (hub-scoped, lower-case escapes, `/` left in the signature, fields sig-se-skn-sr) and
/// azure-notification-hub-unofficial, a port of the official Node SDK (namespace-scoped,
/// upper-case escapes, everything escaped, fields sr-sig-se-skn).
@Suite("NH shared access signatures")
struct SharedAccessSignatureTests {
    static let host = "127.0.0.1:8443"
    static let send = NHAccessRule(
        name: "DefaultFullSharedAccessSignature", primaryKey: "k0jQ+Qu0xD6p/8Xbq9bFzD4yZs0wzYcJm2hN6b0q5aE=",
        secondaryKey: "c2Vjb25kYXJ5LWtleS1vZi10aGUtZnVsbC1ydWxlLXh4eA==", rights: [.listen, .send, .manage])
    static let listen = NHAccessRule(
        name: "DefaultListenSharedAccessSignature", primaryKey: "bGlzdGVuLW9ubHkta2V5LWZvci1kZXZpY2VzLXh4eHh4eA==",
        secondaryKey: "bGlzdGVuLXNlY29uZGFyeS1rZXktb2YtdGhlLXJ1bGUteA==", rights: [.listen])

    static let script = #"""
        import sys, hmac, hashlib, base64, urllib.parse
        style, uri, key_name, key, expiry = sys.argv[1:6]
        def mac(text):
            return base64.b64encode(hmac.new(key.encode('utf-8'), text.encode('utf-8'), hashlib.sha256).digest())
        if style == 'rest-python':
            my_uri = urllib.parse.quote(uri, '').lower()
            sig = urllib.parse.quote(mac(my_uri + '\n' + expiry))
            print('SharedAccessSignature sig={0}&se={1}&skn={2}&sr={3}'.format(sig, expiry, key_name, my_uri))
        else:
            sr = urllib.parse.quote(uri.lower(), safe='')
            sig = urllib.parse.quote(mac(sr + '\n' + expiry), safe='')
            print('SharedAccessSignature sr={0}&sig={1}&se={2}&skn={3}'.format(sr, sig, expiry, urllib.parse.quote(key_name, safe='')))
        """#

    /// A token made by `style`'s algorithm in Python.
    static func token(_ style: String, uri: String, rule: NHAccessRule, key: String? = nil, expiry: Int64) async throws -> String {
        let (status, output) = try await runTool(
            "/usr/bin/python3", ["-c", script, style, uri, rule.name, key ?? rule.primaryKey, String(expiry)])
        try #require(status == 0, "python3: \(output)")
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    static func authorize(
        _ header: String?, path: String = "/shop/messages/", host: String = host, needs right: NHRight = .send
    )
        throws(NHError) -> NHAccessRule
    {
        try NHAuthorizer.authorize(header: header, host: host, path: path, rules: [send, listen], needs: right, now: now)
    }

    @Test(arguments: ["rest-python", "node"])
    func bothClientsTokensAreAcceptedWithEitherKey(style: String) async throws {
        // Hub-scoped as rest-python signs, namespace-scoped as the Node SDK signs; many expiries,
        // so signatures with '+', '/' and '=' come up.
        let uri = style == "rest-python" ? "https://\(Self.host)/shop" : "https://\(Self.host)/"
        for offset in Int64(0)..<12 {
            let primary = try await Self.token(style, uri: uri, rule: Self.send, expiry: Self.now + 300 + offset)
            #expect(try Self.authorize(primary) == Self.send, "\(primary)")
            let secondary = try await Self.token(
                style, uri: uri, rule: Self.send, key: Self.send.secondaryKey, expiry: Self.now + 300 + offset)
            #expect(try Self.authorize(secondary) == Self.send, "the secondary key signs as well (rotation): \(secondary)")
        }
        // Our own signer's tokens read back the same way.
        let ours = SharedAccessSignature.header(
            resourceURI: uri, keyName: Self.send.name, key: Self.send.primaryKey, expiry: Self.now + 60)
        #expect(try Self.authorize(ours) == Self.send)
    }

    @Test func refusalsAreNHsAndSayNothingOfTheKeys() async throws {
        let uri = "https://\(Self.host)/shop"
        let later = Self.now + 300
        func refusal(_ header: String?, path: String = "/shop/messages/", host: String = Self.host, needs: NHRight = .send) -> NHError? {
            do {
                _ = try Self.authorize(header, path: path, host: host, needs: needs)
                return nil
            } catch {
                return error
            }
        }
        var wrongKey = Self.send
        wrongKey.primaryKey = "d3Jvbmcta2V5LXRoYXQtbm8tcnVsZS1ob2xkcy14eHh4eA=="
        let forged = try await Self.token("node", uri: uri, rule: wrongKey, expiry: later)
        #expect(refusal(forged)?.code == "InvalidSignature")
        var unknown = Self.send
        unknown.name = "NoSuchRule"
        let unknownName = try await Self.token("node", uri: uri, rule: unknown, expiry: later)
        #expect(refusal(unknownName) == refusal(forged), "an unknown rule name answers as a wrong key does")
        let expired = try await Self.token("node", uri: uri, rule: Self.send, expiry: Self.now - 1)
        #expect(refusal(expired)?.code == "ExpiredToken")
        let listening = try await Self.token("node", uri: uri, rule: Self.listen, expiry: later)
        #expect(refusal(listening)?.status == 403 && refusal(listening)?.code == "InsufficientClaims", "a Listen rule does not send")
        #expect(refusal(listening, needs: .listen) == nil, "and does what it may")
        #expect(
            refusal(try await Self.token("rest-python", uri: "https://\(Self.host)/news", rule: Self.send, expiry: later))?.code
                == "InvalidAudience")
        #expect(
            refusal(try await Self.token("node", uri: "https://other.example:8443/", rule: Self.send, expiry: later))?.code
                == "InvalidAudience")
        #expect(
            refusal(try await Self.token("node", uri: "https://\(Self.host)/sho", rule: Self.send, expiry: later))?.code
                == "InvalidAudience",
            "a prefix counts only at a '/'")
        #expect(refusal(nil)?.code == "MissingToken")
        #expect(refusal("Bearer abc")?.code == "MissingToken")
    }

    @Test(arguments: [
        "SharedAccessSignature sr=a&sr=b&sig=x&se=1&skn=n",
        "SharedAccessSignature sr=a&sig=x&se=1&skn=n&extra=1",
        "SharedAccessSignature sr=a&sig=%ZZ&se=1&skn=n",
        "SharedAccessSignature sr=a&sig=bm90LTMyLWJ5dGVz&se=1&skn=n",
        "SharedAccessSignature sr=a&sig=&se=99999999999999&skn=n",
        "SharedAccessSignature sr=&sig=x&se=1&skn=n",
        "SharedAccessSignature sig=x&se=1&skn=n",
        "SharedAccessSignature sr=a&sig=x&se=-1&skn=n",
        "SharedAccessSignature sr=a&sig=x&se=1&skn=",
        "SharedAccessSignature novalue",
    ])
    func malformedTokensAreRefusedAsSuch(header: String) {
        #expect(throws: NHError.self) { try SharedAccessSignature(header: header) }
        do {
            _ = try SharedAccessSignature(header: header)
        } catch {
            #expect(error.code == "MalformedToken", "\(header): \(error)")
        }
    }

    @Test func anOverlongHeaderIsRefusedBeforeItIsRead() {
        let header = "SharedAccessSignature sr=" + String(repeating: "a", count: SharedAccessSignature.maxHeaderBytes)
        #expect(throws: NHError.malformedToken("longer than \(SharedAccessSignature.maxHeaderBytes) bytes")) {
            try SharedAccessSignature(header: header)
        }
    }
}
