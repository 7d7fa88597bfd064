/// A value that can be one argv entry of a ``RedisCommand``.
package protocol RedisArgument: Sendable {
    /// Calls `body` with this argument's bytes, exactly as Redis should receive them.
    func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    /// Appends this argument as one RESP bulk string (`$<length>\r\n<bytes>\r\n`). The common
    /// types write it directly: going through `withRedisBytes` from an existential costs a
    /// generic-metadata lookup and a closure per argument, which showed in profiles.
    func appendRESP(to buffer: inout [UInt8])
}

extension RedisArgument {
    package func appendRESP(to buffer: inout [UInt8]) {
        withRedisBytes { buffer.appendRESPBulk($0) }
    }
}

extension Array where Element == UInt8 {
    /// `$<length>\r\n<bytes>\r\n`, the bytes copied in one block: appending a String's
    /// UTF-8 view byte by byte, and a String for the length, were 9 % of a fan-out worker's CPU.
    mutating func appendRESPBulk(_ bytes: UnsafeRawBufferPointer) {
        append(UInt8(ascii: "$"))
        Self.withDecimal(bytes.count) { append(contentsOf: $0) }
        append(13)
        append(10)
        append(contentsOf: bytes)
        append(13)
        append(10)
    }

    mutating func appendRESPBulk(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ appendRESPBulk(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { appendRESPBulk($0) }
        }
    }

    /// Calls `body` with the decimal digits of `value` (and its sign), written on the stack.
    static func withDecimal<R>(_ value: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var magnitude = value.magnitude
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "-")
            }
            return body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[index...])))
        }
    }
}

extension String: RedisArgument {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var contiguous = self
        return try contiguous.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    package func appendRESP(to buffer: inout [UInt8]) {
        withRedisBytes { buffer.appendRESPBulk($0) }
    }
}

extension Substring: RedisArgument {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension Array: RedisArgument where Element == UInt8 {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }

    package func appendRESP(to buffer: inout [UInt8]) {
        withUnsafeBytes { buffer.appendRESPBulk($0) }
    }
}

extension ArraySlice: RedisArgument where Element == UInt8 {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(body)
    }
}

extension Int: RedisArgument {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)  // a small string: no allocation
    }

    package func appendRESP(to buffer: inout [UInt8]) {
        [UInt8].withDecimal(self) { buffer.appendRESPBulk($0) }
    }
}

extension Int64: RedisArgument {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension UInt64: RedisArgument {
    @inlinable
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try String(self).withRedisBytes(body)
    }
}

extension Double: RedisArgument {
    /// Redis reads doubles as `strtod` does; `+inf`/`-inf` are its spellings of infinity.
    package func withRedisBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let text = isInfinite ? (self < 0 ? "-inf" : "+inf") : String(self)
        return try text.withRedisBytes(body)
    }
}
