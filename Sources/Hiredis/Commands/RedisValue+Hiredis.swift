internal import CHiredis

extension RedisValue {
    /// Copies a hiredis reply tree; the caller frees the C reply.
    init(_ reply: UnsafeMutablePointer<redisReply>) {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING:
            self = .bulk(node.len == 0 ? [] : Array(UnsafeRawBufferPointer(start: node.str, count: node.len)))
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: UnsafeRawBufferPointer(start: node.str, count: node.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            self = .error(String(decoding: UnsafeRawBufferPointer(start: node.str, count: node.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int(node.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            elements.reserveCapacity(node.elements)
            for index in 0..<node.elements {
                if let element = node.element[index] { elements.append(RedisValue(element)) } else { elements.append(.null) }
            }
            self = .array(elements)
        default:
            self = .null
        }
    }
}
