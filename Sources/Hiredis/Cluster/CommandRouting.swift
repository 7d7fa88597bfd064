/// Where a command goes in a cluster: the slot of its key, every master, or any node.
enum CommandRoute: Hashable {
    case slot(Int)
    /// `SCRIPT LOAD`/`FLUSH`: every master must hear it.
    case allMasters
    /// No key (`PING`, `INFO`, a script with no keys): any node.
    case anyNode
}

extension RedisCommand {
    /// The argv entry at `index` (0 is the name), without decoding the others.
    func argument(at wanted: Int) -> ArraySlice<UInt8>? {
        var index = encodedArguments.startIndex
        var position = 0
        while index < encodedArguments.endIndex {
            // "$<length>\r\n<bytes>\r\n"
            guard let lengthEnd = encodedArguments[index...].firstIndex(of: 13) else { return nil }
            var length = 0
            for digit in encodedArguments[(index + 1)..<lengthEnd] { length = length * 10 + Int(digit - 48) }
            let start = lengthEnd + 2
            if position == wanted { return encodedArguments[start..<(start + length)] }
            index = start + length + 2
            position += 1
        }
        return nil
    }

    private func argumentString(at index: Int) -> String? {
        argument(at: index).map { String(decoding: $0, as: UTF8.self).uppercased() }
    }

    /// The key that decides the command's node, by the command's shape (the first key; a
    /// multi-key command must keep its keys in one slot, as Redis Cluster requires).
    var route: CommandRoute {
        guard let name = argumentString(at: 0) else { return .anyNode }
        switch name {
        case "EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL", "FCALL_RO":
            guard let keys = argumentString(at: 2).flatMap({ Int($0) }), keys > 0, let key = argument(at: 3) else { return .anyNode }
            return .slot(HashSlot.of(key))
        case "XREAD", "XREADGROUP":
            var index = 1
            while let token = argumentString(at: index) {
                if token == "STREAMS" { return argument(at: index + 1).map { .slot(HashSlot.of($0)) } ?? .anyNode }
                index += 1
            }
            return .anyNode
        case "XGROUP", "XINFO", "OBJECT", "MEMORY":
            // Subcommand first, then the key (XINFO HELP and the like have none).
            return argument(at: 2).map { .slot(HashSlot.of($0)) } ?? .anyNode
        case "SCRIPT":
            return .allMasters
        case "PING", "INFO", "CLUSTER", "CLIENT", "CONFIG", "DBSIZE", "TIME", "COMMAND", "ECHO", "MULTI", "EXEC", "DISCARD",
            "ASKING", "READONLY", "WAIT", "PUBLISH", "SUBSCRIBE", "PSUBSCRIBE", "FLUSHALL", "FLUSHDB", "SCAN", "KEYS", "RANDOMKEY":
            return .anyNode
        default:
            return argument(at: 1).map { .slot(HashSlot.of($0)) } ?? .anyNode
        }
    }

    /// Whether the command only reads, so running it twice is the same as once (a read sent again
    /// after its connection broke). Unknown commands count as writes.
    var isReadOnly: Bool {
        guard let name = argumentString(at: 0) else { return false }
        return Self.readOnlyNames.contains(name)
    }

    private static let readOnlyNames: Set<String> = [
        "GET", "MGET", "STRLEN", "GETRANGE", "EXISTS", "TYPE", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME",
        "HGET", "HMGET", "HGETALL", "HEXISTS", "HLEN", "HKEYS", "HVALS", "HSTRLEN", "HSCAN",
        "SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD", "SSCAN",
        "ZRANGE", "ZRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZCARD", "ZCOUNT", "ZSCORE", "ZMSCORE", "ZRANK", "ZSCAN",
        "LRANGE", "LLEN", "LINDEX", "XLEN", "XRANGE", "XREVRANGE", "XPENDING", "XINFO",
        "EVALSHA_RO", "EVAL_RO", "FCALL_RO",
        "PING", "ECHO", "INFO", "TIME", "DBSIZE", "SCAN", "KEYS", "COMMAND",
    ]
}
