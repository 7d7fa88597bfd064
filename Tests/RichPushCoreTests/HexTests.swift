import Foundation
import RichPushCore
import Testing

@Suite("Hex")
struct HexTests {
    @Test func encodesEveryByteAsTwoLowercaseDigits() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.encode(all) == all.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode(Data([0xDE, 0xAD, 0xBE, 0xEF])) == "deadbeef")
        #expect(Hex.isDigits(Hex.encode(all)) && !Hex.isDigits("0x1"))
    }

    @Test func decodesWhatItEncodesAndNothingElse() {
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.decode(Hex.encode(all)) == all)
        #expect(Hex.decode("DEADbeef") == [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(Hex.decode("") == [])
        for bad in ["a", "0g", "zz", " 0", "0x"] { #expect(Hex.decode(bad) == nil, "\(bad)") }
    }
}
