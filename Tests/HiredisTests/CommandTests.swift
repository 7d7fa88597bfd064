import Testing

@testable import Hiredis

@Suite("Commands and scripts, offline")
struct CommandTests {
    @Test func argvKeepsEveryArgumentApartAndExact() {
        var command = RedisCommand("SET", "key", [UInt8]([0, 13, 10, 255]), 42)
        command.append("")
        command.append(-1.5)
        #expect(command.count == 6)
        #expect(command.name == "SET")
        #expect(command.arguments == [Array("SET".utf8), Array("key".utf8), [0, 13, 10, 255], Array("42".utf8), [], Array("-1.5".utf8)])
        // Integers are written digit by digit (no String): signs, zero and the extremes.
        let integers = RedisCommand("X", 0, -7, Int.max, Int.min, "ünï", Substring("sub"), [UInt8]([1, 2])[1...])
        let expected: [[UInt8]] = [
            Array("X".utf8), Array("0".utf8), Array("-7".utf8), Array("\(Int.max)".utf8), Array("\(Int.min)".utf8),
            Array("ünï".utf8), Array("sub".utf8), [2],
        ]
        #expect(integers.arguments == expected)
    }

    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ("return 1", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
    ])
    func scriptsAreNamedByTheSHA1RedisComputes(input: String, digest: String) {
        #expect(RedisScript(input).sha1 == digest)
    }

    @Test func serverErrorPrefixAndTransience() {
        let wrongType = RedisError(server: "WRONGTYPE Operation against a key holding the wrong kind of value")
        #expect(wrongType.serverErrorPrefix == "WRONGTYPE")
        #expect(!wrongType.isTransient)
        #expect(RedisError(server: "LOADING Redis is loading the dataset in memory").isTransient)
        #expect(RedisError(code: .connectionLost, message: "x").isTransient)
        #expect(RedisError(code: .authenticationFailed, message: "x").serverErrorPrefix == nil)
    }
}
