import Foundation
import Testing

@testable import RichPushNH

@Suite("NH batch direct sends")
struct NHBatchDirectSendTests {
    static let payload = #"{"aps":{"alert":"hi"}}"#

    /// The body as the .NET SDK writes it: a leading CRLF, `Content-type` lines, the close with no
    /// line end after it.
    static func dotNetBody(_ devices: String, boundary: String = "nh-batch-multipart-boundary") -> [UInt8] {
        Array(
            ("\r\n--\(boundary)\r\nContent-type: application/json;charset=utf-8\r\nContent-Disposition: inline; name=notification\r\n\r\n"
                + "\(payload)\r\n--\(boundary)\r\nContent-type: application/json\r\nContent-Disposition: inline; name=devices\r\n\r\n"
                + "\(devices)\r\n--\(boundary)--").utf8)
    }

    @Test func readAsTheSDKsWriteIt() throws {
        let contentType = #"multipart/mixed; boundary = "nh-batch-multipart-boundary""#
        let batch = try NHBatchDirectSend.parse(contentType: contentType, body: Self.dotNetBody(#"["AB12","cd34","AB12"]"#))
        #expect(batch.notification == Array(Self.payload.utf8), "the payload exactly, its line end left to the delimiter")
        #expect(batch.handles == ["AB12", "cd34"], "in order, each once")
        // The JS SDK: no leading line break, a boundary of its own, unquoted here; parts in the other order; bare LFs.
        let js =
            "--b-1\nContent-Disposition: inline; name=\"devices\"\n\n[\"x\"]\n--b-1\nContent-Disposition: inline; name=notification\n\n"
            + "\(Self.payload)\n--b-1--\r\n"
        let other = try NHBatchDirectSend.parse(contentType: "Multipart/Mixed;boundary=b-1", body: Array(js.utf8))
        #expect(other == NHBatchDirectSend(notification: Array(Self.payload.utf8), handles: ["x"]))
    }

    @Test(arguments: [
        ("application/json", "a batch direct send's Content-Type is multipart/mixed with a boundary"),
        ("multipart/mixed", "the multipart/mixed Content-Type needs a boundary of 1 to 70 characters"),
        ("multipart/mixed; boundary=\"\"", "the multipart/mixed Content-Type needs a boundary of 1 to 70 characters"),
        (
            "multipart/mixed; boundary=" + String(repeating: "b", count: 71),
            "the multipart/mixed Content-Type needs a boundary of 1 to 70 characters"
        ),
    ])
    func aContentTypeWithoutABoundaryIsRefused(contentType: String, problem: String) {
        #expect(throws: NHError.badRequest(problem)) {
            try NHBatchDirectSend.parse(contentType: contentType, body: Self.dotNetBody("[\"x\"]"))
        }
    }

    @Test func everyMalformedBodySaysWhatIsWrong() {
        let contentType = "multipart/mixed; boundary=nh-batch-multipart-boundary"
        func problem(_ body: [UInt8]) -> String? {
            do {
                _ = try NHBatchDirectSend.parse(contentType: contentType, body: body)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(problem(Self.dotNetBody("[]")) == "the batch names 0 devices; NH takes 1 to 1000")
        let many = "[" + (0...1000).map { "\"h\($0)\"" }.joined(separator: ",") + "]"
        #expect(problem(Self.dotNetBody(many)) == "the batch names 1001 devices; NH takes 1 to 1000")
        #expect(
            problem(Self.dotNetBody("[\"\(String(repeating: "a", count: 2049))\"]"))
                == "a device handle of the batch is 2049 bytes; 1 to 2048 are taken")
        #expect(problem(Self.dotNetBody("[1, 2]")) == "the batch's 'devices' part is a JSON array of device handles (strings)")
        #expect(problem(Self.dotNetBody("[\"x\"]").dropLast(2).map { $0 }) != nil, "not closed")
        #expect(problem([0xff, 0xfe]) == "the batch's body is not UTF-8")
        let noDevices = Array(
            "--nh-batch-multipart-boundary\r\nContent-Disposition: inline; name=notification\r\n\r\n{}\r\n--nh-batch-multipart-boundary--"
                .utf8)
        #expect(problem(noDevices) == "the batch has no 'devices' part (a JSON array of handles)")
        let twice = String(decoding: Self.dotNetBody("[\"x\"]"), as: UTF8.self).replacingOccurrences(
            of: "name=devices", with: "name=notification")
        #expect(problem(Array(twice.utf8)) == "the batch has two 'notification' parts")
        let unnamed = String(decoding: Self.dotNetBody("[\"x\"]"), as: UTF8.self).replacingOccurrences(
            of: "name=devices", with: "name=other")
        #expect(problem(Array(unnamed.utf8))?.hasPrefix("each part of the batch is named") == true)
        let headers = (0..<17).map { "X-\($0): y\r\n" }.joined()
        let crowded = "--nh-batch-multipart-boundary\r\n\(headers)\r\n{}\r\n--nh-batch-multipart-boundary--"
        #expect(problem(Array(crowded.utf8)) == "a part of the batch has over 16 header lines")
        let parts = (0..<9).map { _ in "--nh-batch-multipart-boundary\r\nContent-Disposition: inline; name=devices\r\n\r\n[\"x\"]\r\n" }
            .joined()
        #expect(problem(Array((parts + "--nh-batch-multipart-boundary--").utf8))?.hasPrefix("the batch is multipart/mixed") == true)
    }
}
