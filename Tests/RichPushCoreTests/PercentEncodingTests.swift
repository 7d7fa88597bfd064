import RichPushCore
import Testing

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test func decodesStrictlyAndEncodesAllButUnreserved() {
        #expect(PercentEncoding.decode("https%3a%2F%2Fh%3A8443%2fhub") == "https://h:8443/hub", "either case of escapes")
        #expect(PercentEncoding.decode("a+b") == "a+b" && PercentEncoding.decode("a+b", plusIsSpace: true) == "a b")
        #expect(PercentEncoding.decode("%ZZ") == nil && PercentEncoding.decode("%4") == nil, "a bad escape is an error, not a guess")
        #expect(PercentEncoding.decode("%FF%FE") == nil, "bytes that are not UTF-8")
        #expect(PercentEncoding.decode("%C3%A9t%C3%A9") == "été")
        #expect(PercentEncoding.encode("https://h:1/a b+c=~._-é") == "https%3A%2F%2Fh%3A1%2Fa%20b%2Bc%3D~._-%C3%A9")
    }
}
