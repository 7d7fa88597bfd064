import Synchronization

@testable import Hiredis

/// A Redis client that notes each round trip it makes (its commands' names, and a script's
/// SHA), so a test can tell what work a request did, whatever the machine's speed.
final class RecordingRedis: RedisClient {
    let base: any RedisClient
    private let trips = Mutex<[String]>([])

    init(base: any RedisClient) { self.base = base }

    var topology: RedisTopology { base.topology }

    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let signature = commands.map(Self.signature).joined(separator: "+")
        trips.withLock { $0.append(signature) }
        return try await base.pipeline(commands)
    }

    /// The round trips since the last call, sorted (round trips made at once may come in any order).
    func take() -> [String] {
        trips.withLock { trips in
            defer { trips = [] }; return trips.sorted()
        }
    }

    /// The command's name, with the SHA of an `EVALSHA`.
    static func signature(_ command: RedisCommand) -> String {
        let words = arguments(command.encodedArguments, first: 2)
        return words.first == "EVALSHA" ? words.joined(separator: " ") : words.first ?? "?"
    }

    /// The first `first` arguments of a RESP-encoded argument list (`$<n>\r\n<bytes>\r\n` each).
    private static func arguments(_ encoded: [UInt8], first: Int) -> [String] {
        var words: [String] = []
        var index = 0
        while words.count < first, index < encoded.count, encoded[index] == UInt8(ascii: "$") {
            var length = 0
            index += 1
            while index < encoded.count, encoded[index] != 13 {
                length = length * 10 + Int(encoded[index] - UInt8(ascii: "0"))
                index += 1
            }
            index += 2
            guard index + length <= encoded.count else { break }
            words.append(String(decoding: encoded[index..<index + length], as: UTF8.self).uppercased())
            index += length + 2
        }
        return words
    }
}
