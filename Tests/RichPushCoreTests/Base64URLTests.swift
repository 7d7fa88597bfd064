import Foundation
import RichPushCore
import Testing

/// Base64url as RFC 4648 §5 defines it, without padding, and nothing looser.
@Suite("Base64url")
struct Base64URLTests {
    /// RFC 4648 §10's vectors, padding dropped.
    @Test func theRFCVectorsEncodeAndDecode() throws {
        let vectors = [("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(try #require(Base64URL.decodeBytes(encoded)) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([UInt8]()) == "")
    }

    @Test func theURLAlphabetReplacesPlusAndSlash() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decodeBytes("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    /// Every length of a run of bytes, against Foundation's base64 with the alphabet swapped.
    @Test func everyLengthRoundTripsAndMatchesFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 1...130 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.encode(bytes.lazy.map { $0 }) == encoded, "a sequence without contiguous storage")
            #expect(try #require(Base64URL.decodeBytes(encoded)) == bytes)
            #expect(try #require(Base64URL.decode(Substring(encoded))) == Data(bytes))
        }
    }

    @Test func paddingStandardCharactersWhitespaceAndImpossibleLengthsAreRefused() {
        for text in ["", "Zg==", "Zm8=", "ab+c", "ab/c", "Zm 9v", "Zm9v\n", "Zm9vY", "é", "Zm9v\u{0}"] {
            #expect(Base64URL.decodeBytes(text) == nil, "\(text.debugDescription)")
            #expect(Base64URL.decode(text) == nil, "\(text.debugDescription)")
        }
    }
}
