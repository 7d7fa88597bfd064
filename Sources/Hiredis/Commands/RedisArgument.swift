/// A value that can be one argv entry of a ``RedisCommand``.
public protocol RedisArgument: Sendable {
    /// Calls `body` with this argument's bytes, exactly as Redis should receive them.
    func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    /// Appends this argument as one RESP bulk string (`$<length>\r\n<bytes>\r\n`). The common
    /// types write it directly: going through `withRedisBytes` from an existential costs a
    /// generic-metadata lookup and a closure per argument, which showed in profiles.
    func appendRESP(to buffer: inout [UInt8])
}

extension RedisArgument {
    public func appendRESP(to buffer: inout [UInt8]) {
        withRedisBytes { buffer.appendRESPBulk($0) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendRESPBulk(_ bytes: some Collection<UInt8>) {
        append(UInt8(ascii: "$"))
        append(contentsOf: String(bytes.count).utf8)
        append(contentsOf: [13, 10])
        append(contentsOf: bytes)
        append(contentsOf: [13, 10])
    }
}

extension String: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var contiguous = self
        return try contiguous.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    public func appendRESP(to buffer: inout [UInt8]) {
        buffer.appendRESPBulk(utf8)
    }
}

extension Substring: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension Array: RedisArgument where Element == UInt8 {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }

    public func appendRESP(to buffer: inout [UInt8]) {
        buffer.appendRESPBulk(self)
    }
}

extension ArraySlice: RedisArgument where Element == UInt8 {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension Int: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)  // a small string: no allocation
    }

    public func appendRESP(to buffer: inout [UInt8]) {
        buffer.appendRESPBulk(String(self).utf8)
    }
}

extension Int64: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension UInt64: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension Double: RedisArgument {
    /// Redis reads doubles as `strtod` does; `+inf`/`-inf` are its spellings of infinity.
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let text = isInfinite ? (self < 0 ? "-inf" : "+inf") : String(self)
        return try text.withRedisBytes(body)
    }
}
