import APITestSupport
import Foundation
import NIOCore
import RedisTestSupport
import Testing

@testable import RichPushAPI

/// Random and mutated request bodies through the JSON and multipart parsers and the boundary
/// check: every input ends in a value or an `APIError`, never a trap.
/// `RICHPUSH_FUZZ_ITERATIONS` raises the count (scripts/fuzz.sh runs far more).
@Suite("Input fuzzing")
struct InputFuzzTests {
    static var iterations: Int { ProcessInfo.processInfo.environment["RICHPUSH_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 500 }

    static let seedJSON = Array(
        #"{"message":"Check this image out!","richType":"img","payload":"iVBORw0KGgo=","target":"username:alice"}"#.utf8)
    static let seedMultipart = Array(
        "--XyZ\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nhi\r\n--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{89}PNG\r\n--XyZ--\r\n"
            .utf8)

    @Test func mutatedBodiesNeverTrap() {
        var random = SeededRandom(seed: 7)
        for index in 0..<Self.iterations {
            let seed = index.isMultiple(of: 2) ? Self.seedJSON : Self.seedMultipart
            let body = ByteBuffer(bytes: mutate(seed, using: &random))
            expectValueOrAPIError { _ = try NotificationInput.json(body) }
            expectValueOrAPIError { _ = try NotificationInput.multipart(body, boundary: "XyZ") }
        }
    }

    @Test func nestedJSONAndRandomBoundaries() {
        var random = SeededRandom(seed: 11)
        for depth in [10, 1_000, 100_000] {
            let body = ByteBuffer(string: String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            expectValueOrAPIError { _ = try NotificationInput.json(body) }
        }
        let alphabet = Array("aZ0'()+_,-./:=? \"\t;=\u{0}é".unicodeScalars)
        for _ in 0..<Self.iterations {
            let length = Int.random(in: 0...90, using: &random)
            let value = String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &random)! }))
            expectValueOrAPIError {
                let boundary = try NotificationInput.boundary(of: "multipart/form-data; boundary=\(value)")
                #expect((1...70).contains(boundary.utf8.count))
                _ = try NotificationInput.multipart(ByteBuffer(bytes: Self.seedMultipart), boundary: boundary)
            }
        }
    }

    private func mutate(_ bytes: [UInt8], using random: inout SeededRandom) -> [UInt8] {
        var out = bytes
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            guard !out.isEmpty else { out = [UInt8.random(in: 0...255, using: &random)]; continue }
            let at = Int.random(in: 0..<out.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: out[at] = UInt8.random(in: 0...255, using: &random)
            case 1: out.remove(at: at)
            case 2: out.insert(contentsOf: out[at..<min(out.count, at + Int.random(in: 1...32, using: &random))], at: at)
            default: out.insert([0x7B, 0x5B, 0x22, 0x2D, 0x0D, 0x0A].randomElement(using: &random)!, at: at)
            }
        }
        return out
    }

    private func expectValueOrAPIError(_ body: () throws -> Void) {
        do { try body() } catch { #expect(error is APIError, "\(error)") }
    }
}
