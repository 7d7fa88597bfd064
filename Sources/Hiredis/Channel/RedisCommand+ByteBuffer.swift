import NIOCore

extension RedisCommand {
    /// Writes the whole command, header included, in RESP straight into a channel's buffer.
    func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "*"))
        [UInt8].withDecimal(count) { _ = buffer.writeBytes($0) }
        buffer.writeInteger(UInt16(0x0D0A))  // "\r\n", big-endian
        buffer.writeBytes(encodedArguments)
    }

    /// Bytes the command takes in RESP, near enough to size a buffer.
    var encodedSizeEstimate: Int { encodedArguments.count + 16 }
}
