import Testing

@testable import RichPushWebPush

@Suite("Web Push constants")
struct WebPushConstantsTests {
    @Test func oneRecordCarries3993BytesOfPlaintext() {
        // RFC 8291 §4: rs 4096 = header 86 + ciphertext (plaintext + 1 delimiter) + tag 16.
        #expect(WebPush.maxPlaintextBytes == 4096 - 86 - 16 - 1)
    }
}
