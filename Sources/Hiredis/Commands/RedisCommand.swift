/// One Redis command, binary-safe, kept already encoded in RESP so that sending it is one copy.
///
/// Each argument is stored as `$<length>\r\n<bytes>\r\n`; the `*<count>` header is added when the
/// command is written. Encoding here rather than through `redisAppendCommandArgv` removes
/// hiredis's per-command format-and-allocate step, which was a quarter of the client's CPU time
/// on pipelined XADD (see docs/redis-client.md).
package struct RedisCommand: Sendable, Hashable {
    @usableFromInline var encodedArguments: [UInt8]
    /// Number of argv entries, the command name included.
    package private(set) var count: Int

    package init(_ name: String, _ arguments: any RedisArgument...) {
        self.init(name, arguments: arguments)
    }

    package init(_ name: String, arguments: [any RedisArgument]) {
        encodedArguments = []
        count = 0
        append(name)
        for argument in arguments { append(argument) }
    }

    /// Appends one argument.
    package mutating func append(_ argument: any RedisArgument) {
        argument.appendRESP(to: &encodedArguments)
        count += 1
    }

    /// Appends each argument of a sequence, in order.
    package mutating func append(contentsOf arguments: some Sequence<any RedisArgument>) {
        for argument in arguments { append(argument) }
    }

    /// Appends the whole command, header included, in RESP: what goes on the wire.
    func encode(into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "*"))
        [UInt8].withDecimal(count) { buffer.append(contentsOf: $0) }
        buffer.append(13)
        buffer.append(10)
        buffer.append(contentsOf: encodedArguments)
    }

    /// Each argv entry as bytes (for tests and diagnostics; the hot path never splits the buffer).
    package var arguments: [[UInt8]] {
        var result: [[UInt8]] = []
        var index = encodedArguments.startIndex
        while index < encodedArguments.endIndex {
            // "$<length>\r\n<bytes>\r\n"
            let lengthEnd = encodedArguments[index...].firstIndex(of: 13)!
            let length = Int(String(decoding: encodedArguments[(index + 1)..<lengthEnd], as: UTF8.self))!
            let start = lengthEnd + 2
            result.append(Array(encodedArguments[start..<(start + length)]))
            index = start + length + 2
        }
        return result
    }

    /// The command name, upper-cased, for logs and errors.
    package var name: String { String(decoding: arguments.first ?? [], as: UTF8.self).uppercased() }
}

extension RedisCommand: CustomStringConvertible {
    /// The command with its arguments, each cut to 64 bytes; never log commands that carry secrets.
    package var description: String {
        arguments.map { bytes in
            let text = String(decoding: bytes.prefix(64), as: UTF8.self)
            return bytes.count > 64 ? text + "…" : text
        }.joined(separator: " ")
    }
}
