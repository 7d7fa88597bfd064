/// A value that can be one argv entry of a ``RedisCommand``.
public protocol RedisArgument: Sendable {
    /// Calls `body` with this argument's bytes, exactly as Redis should receive them.
    func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension String: RedisArgument {
    @inlinable
    public func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var contiguous = self
        return try contiguous.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
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
