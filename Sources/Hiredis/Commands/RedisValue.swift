/// A Redis reply, copied out of hiredis's `redisReply` tree so that no C memory outlives the call.
///
/// Error replies nested in arrays (EXEC results, pipelines) stay values; a top-level error reply
/// of a single command is thrown as ``RedisError`` with code ``RedisError/Code/server``.
package enum RedisValue: Sendable, Hashable {
    case status(String)
    case error(String)
    case integer(Int)
    case bulk([UInt8])
    case null
    case array([RedisValue])
}

extension RedisValue {
    /// The text of a status or bulk reply (bulk bytes decoded as UTF-8), an integer as text, else nil.
    package var string: String? {
        switch self {
        case .status(let text): text
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .integer(let value): String(value)
        default: nil
        }
    }

    /// The bytes of a bulk or status reply, else nil.
    package var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): bytes
        case .status(let text): Array(text.utf8)
        default: nil
        }
    }

    /// An integer reply, or a bulk/status reply that parses as a decimal integer, else nil.
    package var int: Int? {
        switch self {
        case .integer(let value): value
        case .bulk, .status: string.flatMap { Int($0) }
        default: nil
        }
    }

    /// The elements of an array reply, else nil (a null array is nil too).
    package var array: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The error text of an error reply, else nil.
    package var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    /// Throws the error reply as a ``RedisError``; returns any other value unchanged.
    @discardableResult
    package func throwingError() throws(RedisError) -> RedisValue {
        if case .error(let message) = self { throw RedisError(server: message) }
        return self
    }
}

extension RedisValue: CustomStringConvertible {
    package var description: String {
        switch self {
        case .status(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(let bytes): "\"\(String(decoding: bytes, as: UTF8.self))\""
        case .null: "(nil)"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
