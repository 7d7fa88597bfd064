internal import CHiredis
import NIOCore

/// hiredis's RESP parser (`redisReader`) without a socket: bytes go in, ``RedisValue``s come out.
///
/// Not `Sendable`: one reader belongs to one channel handler and is used on its event loop only.
/// The reader keeps at most its `maxbuf` of spare buffer once drained (hiredis's 16 KiB default),
/// so an idle connection does not hold on to the memory of its largest reply.
final class RESPReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() {
        guard let reader = redisReaderCreate() else { fatalError("redisReaderCreate: out of memory") }
        self.reader = reader
    }

    deinit {
        redisReaderFree(reader)
    }

    /// Hands the readable bytes of `buffer` to the parser (it copies them).
    func feed(_ buffer: ByteBuffer) throws(RedisError) {
        let status = buffer.withUnsafeReadableBytes { bytes in
            bytes.isEmpty ? REDIS_OK : redisReaderFeed(reader, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        if status != REDIS_OK { throw protocolError() }
    }

    /// The next complete reply, or nil if more bytes are needed.
    func next() throws(RedisError) -> RedisValue? {
        var raw: UnsafeMutableRawPointer?
        if redisReaderGetReply(reader, &raw) != REDIS_OK { throw protocolError() }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return RedisValue(raw.assumingMemoryBound(to: redisReply.self))
    }

    private func protocolError() -> RedisError {
        let text = withUnsafeBytes(of: reader.pointee.errstr) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return String(decoding: bytes[..<(bytes.firstIndex(of: 0) ?? bytes.count)], as: UTF8.self)
        }
        return RedisError(code: .connectionLost, message: "unreadable reply from Redis: \(text)")
    }
}
