import RichPushCore
import Testing

@testable import RichPushAPI

/// The byte-level parsers on every request's path: Authorization, media types, secrets.
@Suite("Header parsing")
struct HeaderParsingTests {
    @Test func basicAndBearerCredentials() {
        // "bob:pw:with:colons" and "ünï:x", base64.
        guard case .basic(let name, let password)? = Credentials(header: "Basic Ym9iOnB3OndpdGg6Y29sb25z") else {
            Issue.record("Basic not parsed")
            return
        }
        #expect(name == "bob" && password == "pw:with:colons")
        guard case .basic(let unicode, "x")? = Credentials(header: "basic \t w7xuw686eA== \t") else {
            Issue.record("Basic with blanks around the value, lowercase scheme, not parsed")
            return
        }
        #expect(unicode == "ünï")
        guard case .bearer(let token)? = Credentials(header: "Bearer  rpk_abc_def ") else {
            Issue.record("Bearer not parsed")
            return
        }
        #expect(token == "rpk_abc_def")
    }

    @Test(arguments: [
        nil, "", "Basic", "Basic ", "Basic !!!", "Basic Ym9i", "Bearer    ", "Digest abc", String(repeating: "A", count: 1025),
    ])
    func refusedCredentials(header: String?) {
        #expect(Credentials(header: header) == nil)
    }

    @Test func mediaTypeEssence() {
        #expect(MediaType.essence(of: " image/PNG ; charset=x") == "image/PNG")
        #expect(MediaType.essence(of: "\tmultipart/form-data;boundary=b") == "multipart/form-data")
        #expect(MediaType.essence(of: "") == "")
        #expect(MediaType.isInline("Image/Png; q=1") && !MediaType.isInline(" image/svg+xml") && !MediaType.isInline("text/html"))
        #expect(MediaType.isValid("text/plain; charset=utf-8") && !MediaType.isValid("text") && !MediaType.isValid("a/b\r\nX: y"))
        #expect("  \t ".trimmingOptionalWhitespace.isEmpty && " a b ".trimmingOptionalWhitespace == "a b")
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equal([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equal([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equal([1, 2] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(ConstantTime.equal(Array("same".utf8), "same".utf8))
    }

    @Test func theCredentialCacheMatchesOnlyTheSecretItWasGiven() {
        let cache = CredentialCache<Int>()
        cache.remember("bob", secret: "pw", value: 7)
        #expect(cache.lookup("bob", secret: "pw")?.value == 7)
        #expect(cache.lookup("bob", secret: "pw ") == nil)
        #expect(cache.lookup("bo", secret: "bpw") == nil)
        cache.forget("bob")
        #expect(cache.lookup("bob", secret: "pw") == nil)
    }
}
