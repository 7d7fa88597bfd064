/// A cluster node's address.
package struct ClusterNode: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, as MOVED and ASK name nodes.
    package init?(_ text: some StringProtocol) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        self.init(host: String(text[..<colon]), port: port)
    }

    package var description: String { "\(host):\(port)" }
}

/// Which master owns each of the 16,384 slots.
struct ClusterSlotMap: Sendable {
    private(set) var owners: [ClusterNode?] = Array(repeating: nil, count: HashSlot.count)
    /// The masters that own slots, kept with `owners` (every command's routing reads it: it is
    /// not recomputed from the 16,384 slots each time).
    private(set) var masters: [ClusterNode] = []

    var isComplete: Bool { !owners.contains(nil) }

    /// Gives `slots` to `node` (a map being read, or a MOVED reply).
    mutating func assign(_ slots: ClosedRange<Int>, to node: ClusterNode, recount: Bool = true) {
        for slot in slots { owners[slot] = node }
        if recount { recountMasters() }
    }

    private mutating func recountMasters() {
        masters = Array(Set(owners.compactMap { $0 })).sorted { $0.description < $1.description }
    }

    /// From `CLUSTER SHARDS` (Redis 7): each shard's slot ranges and its master's address.
    static func shards(_ reply: RedisValue, seed: ClusterNode) -> ClusterSlotMap? {
        guard let shards = reply.array else { return nil }
        var map = ClusterSlotMap()
        for shard in shards {
            let fields = flatMap(shard)
            guard let ranges = fields["slots"]?.array, let nodes = fields["nodes"]?.array else { return nil }
            // The healthy master; while a failover is under way, the failed one (commands to it
            // fail and the map is read again until its replica has taken over).
            let candidates = nodes.map(flatMap).filter { $0["role"]?.string == "master" }
            let master = candidates.first { $0["health"]?.string != "fail" } ?? candidates.first
            guard let master, let port = master["port"]?.int ?? master["tls-port"]?.int else { continue }
            let host = address(master["ip"]?.string ?? master["endpoint"]?.string, seed: seed)
            for index in stride(from: 0, to: ranges.count - 1, by: 2) {
                guard let start = ranges[index].int, let end = ranges[index + 1].int, start <= end, end < HashSlot.count else { return nil }
                map.assign(start...end, to: ClusterNode(host: host, port: port), recount: false)
            }
        }
        map.recountMasters()
        return map
    }

    /// From `CLUSTER SLOTS`: `[start, end, [ip, port, id], replicas…]` per range.
    static func slots(_ reply: RedisValue, seed: ClusterNode) -> ClusterSlotMap? {
        guard let ranges = reply.array else { return nil }
        var map = ClusterSlotMap()
        for range in ranges {
            guard let parts = range.array, parts.count >= 3, let start = parts[0].int, let end = parts[1].int, start <= end,
                end < HashSlot.count,
                let master = parts[2].array, master.count >= 2, let port = master[1].int
            else { return nil }
            let host = address(master[0].string, seed: seed)
            map.assign(start...end, to: ClusterNode(host: host, port: port), recount: false)
        }
        map.recountMasters()
        return map
    }

    /// An empty or `?` address means "the node you asked".
    private static func address(_ host: String?, seed: ClusterNode) -> String {
        guard let host, !host.isEmpty, host != "?" else { return seed.host }
        return host
    }

    private static func flatMap(_ value: RedisValue) -> [String: RedisValue] {
        let items = value.array ?? []
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string { fields[name] = items[index + 1] }
        }
        return fields
    }
}
