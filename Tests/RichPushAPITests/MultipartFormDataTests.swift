import Testing

@testable import RichPushAPI

@Suite("multipart/form-data")
struct MultipartFormDataTests {
    @Test func partsAsCurlSendsThem() throws {
        let body = Array(
            "preamble\r\n--b1\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nCheck this image out!\r\n--b1 \r\ncontent-disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{1}\r\n\u{2}\r\n--b1--\r\nepilogue"
                .utf8)
        let parts = try MultipartFormData.parse(body, boundary: "b1")
        #expect(parts.count == 2)
        #expect(parts[0].headers["content-disposition"] == "form-data; name=\"message\"")
        #expect(String(decoding: parts[0].body, as: UTF8.self) == "Check this image out!")
        #expect(parts[1].headers["content-type"] == "image/png")
        #expect(Array(parts[1].body) == [1, 13, 10, 2])
    }

    @Test(arguments: [
        ("--b1\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end", "closing boundary"),
        ("--b1\r\nN\u{E9}me: x\r\n\r\nv\r\n--b1--", "name: value"),  // a header-name byte ≥ 0x80 trapped MultipartKit
        ("--b1\r\nno colon here\r\n\r\nv\r\n--b1--", "name: value"),
        ("--b1garbage\r\n\r\nv\r\n--b1--", "CRLF"),
        ("nothing", "no boundary"),
    ])
    func refusals(body: String, words: String) {
        #expect {
            _ = try MultipartFormData.parse(Array(body.utf8), boundary: "b1")
        } throws: { error in
            "\(error)".contains(words)
        }
    }

    @Test func partsAreBounded() {
        let many = (0...MultipartFormData.maxParts).map { _ in "--b\r\nA: b\r\n\r\nv\r\n" }.joined() + "--b--"
        #expect(throws: MultipartFormData.Error.self) { try MultipartFormData.parse(Array(many.utf8), boundary: "b") }
    }
}
