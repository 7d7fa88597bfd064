internal import CHiredis
import Glibc

/// One hiredis `redisContext`: a blocking socket to Redis with hiredis's reader and write buffer.
///
/// Not `Sendable` on purpose: a context is owned by exactly one thread (a ``RedisConnection``'s or a
/// ``RedisSubscriber``'s), as GRDB owns its SQLite handle. Every call here may block that thread.
final class RedisContext {
    private let context: UnsafeMutablePointer<redisContext>
    let configuration: RedisConfiguration

    /// Connects, then runs the handshake (AUTH, SELECT, CLIENT SETNAME) and sets the timeouts.
    init(configuration: RedisConfiguration) throws(RedisError) {
        self.configuration = configuration
        guard let context = redisConnectWithTimeout(configuration.host, Int32(configuration.port), configuration.connectTimeout.timeval)
        else {
            throw RedisError(code: .connectionFailed, message: "cannot allocate a hiredis context")
        }
        if context.pointee.err != 0 {
            let reason = Self.errorString(context)
            redisFree(context)
            throw RedisError(code: .connectionFailed, message: "cannot connect to \(configuration.host):\(configuration.port): \(reason)")
        }
        self.context = context
        if configuration.tcpKeepAlive { _ = redisEnableKeepAlive(context) }
        // The handshake is bounded by the connect timeout; the command timeout applies afterwards.
        _ = redisSetTimeout(context, configuration.connectTimeout.timeval)
        try handshake()
        setReadTimeout(configuration.commandTimeout)
    }

    deinit {
        redisFree(context)
    }

    /// The socket, for `poll` and for `shutdown` from another thread to interrupt a blocked read.
    var fileDescriptor: Int32 { context.pointee.fd }

    /// Sets `SO_RCVTIMEO`/`SO_SNDTIMEO`; nil waits forever.
    func setReadTimeout(_ timeout: Duration?) {
        _ = redisSetTimeout(context, (timeout ?? .zero).timeval)
    }

    /// Queues commands in hiredis's output buffer; nothing is written until a reply is read or ``flush()``.
    func append(_ commands: some Collection<RedisCommand>) throws(RedisError) {
        guard !commands.isEmpty else { return }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(commands.reduce(0) { $0 + $1.encodedArguments.count + 16 })
        for command in commands { command.encode(into: &buffer) }
        let status = buffer.withUnsafeBytes { bytes in
            redisAppendFormattedCommand(context, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        if status != REDIS_OK { throw ioError(during: commands.first?.name ?? "write") }
    }

    func append(_ command: RedisCommand) throws(RedisError) {
        try append(CollectionOfOne(command))
    }

    /// Reads the next reply, writing any buffered commands first (blocking).
    func readReply() throws(RedisError) -> RedisValue {
        var raw: UnsafeMutableRawPointer?
        if redisGetReply(context, &raw) != REDIS_OK { throw ioError(during: "read") }
        guard let raw else { throw RedisError(code: .connectionLost, message: "no reply from \(endpoint)") }
        defer { freeReplyObject(raw) }
        return RedisValue(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Sends commands and reads their replies in one round trip; error replies stay values.
    func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisValue] {
        try append(commands)
        var replies: [RedisValue] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try readReply()) }
        return replies
    }

    /// Sends one command and reads its reply; an error reply is thrown.
    func command(_ command: RedisCommand) throws(RedisError) -> RedisValue {
        try append(command)
        return try readReply().throwingError()
    }

    /// Writes the whole output buffer (blocking), for connections driven by `poll`.
    func flush() throws(RedisError) {
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(context, &done) != REDIS_OK { throw ioError(during: "write") }
        }
    }

    /// Reads what the socket has (one `read`), for connections driven by `poll`.
    func readAvailable() throws(RedisError) {
        if redisBufferRead(context) != REDIS_OK { throw ioError(during: "read") }
    }

    /// The next complete reply already read from the socket, or nil if more bytes are needed.
    func bufferedReply() throws(RedisError) -> RedisValue? {
        var raw: UnsafeMutableRawPointer?
        if redisGetReplyFromReader(context, &raw) != REDIS_OK { throw ioError(during: "parse") }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return RedisValue(raw.assumingMemoryBound(to: redisReply.self))
    }

    private var endpoint: String { "\(configuration.host):\(configuration.port)" }

    private func handshake() throws(RedisError) {
        let commands = configuration.handshakeCommands
        guard !commands.isEmpty else { return }
        try configuration.checkHandshake(commands, replies: try pipeline(commands))
    }

    private func ioError(during operation: String) -> RedisError {
        let reason = Self.errorString(context)
        let code = context.pointee.err
        // hiredis reports a socket timeout as an I/O error with errno's text.
        if code == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || reason.contains("temporarily unavailable")) {
            return RedisError(
                code: .timeout,
                message:
                    "no reply from \(endpoint) within \(configuration.commandTimeout.map { "\($0)" } ?? "the timeout") during \(operation)")
        }
        return RedisError(code: .connectionLost, message: "connection to \(endpoint) lost during \(operation): \(reason)")
    }

    private static func errorString(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            let text = String(decoding: bytes[..<end], as: UTF8.self)
            return text.isEmpty ? "error \(context.pointee.err)" : text
        }
    }
}

extension Duration {
    var timeval: Glibc.timeval {
        let (seconds, attoseconds) = components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
