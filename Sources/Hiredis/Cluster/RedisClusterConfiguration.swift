import Foundation

/// Where a Redis Cluster is: seed nodes (any reachable one tells the rest) and how to connect to
/// every node (credentials, timeouts, client name: the same for all).
package struct RedisClusterConfiguration: Sendable, Hashable {
    package var seeds: [ClusterNode]
    /// Host and port are replaced per node; database is always 0 in a cluster.
    package var node: RedisConfiguration
    /// Connections kept to each master.
    package var connectionsPerNode: Int
    /// How many times a command follows MOVED/ASK or waits out TRYAGAIN, CLUSTERDOWN and a lost
    /// node (with a slot-map refresh) before its error is returned.
    package var maxRedirects: Int

    package init(seeds: [ClusterNode], node: RedisConfiguration = RedisConfiguration(), connectionsPerNode: Int = 2, maxRedirects: Int = 8)
    {
        self.seeds = seeds
        self.node = node
        self.connectionsPerNode = max(1, connectionsPerNode)
        self.maxRedirects = max(1, maxRedirects)
    }

    package static let scheme = "redis+cluster"

    /// Whether `url` names a cluster (`redis+cluster://…`).
    package static func isClusterURL(_ url: String) -> Bool { url.lowercased().hasPrefix(scheme + "://") }

    /// Parses `redis+cluster://[user[:password]@]host:port[,host:port…][/][?name=…]`.
    package init(url: String) throws(RedisError) {
        let fail = { (why: String) in
            RedisError(code: .invalidURL, message: "invalid Redis Cluster URL '\(RedisConfiguration.redact(url))': \(why)")
        }
        guard Self.isClusterURL(url) else { throw fail("expected redis+cluster://host:port[,host:port…]") }
        var rest = Substring(url.dropFirst(Self.scheme.count + 3))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var node = RedisConfiguration()
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = String(credentials[..<colon]).removingPercentEncoding ?? ""
                node.username = user.isEmpty ? nil : user
                node.password = String(credentials[credentials.index(after: colon)...]).removingPercentEncoding
            } else {
                node.password = String(credentials).removingPercentEncoding
            }
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || path == "0" else { throw fail("a cluster has only database 0") }
            rest = rest[..<slash]
        }
        var seeds: [ClusterNode] = []
        for part in rest.split(separator: ",") {
            guard let seed = ClusterNode(part), !seed.host.isEmpty, (1...65535).contains(seed.port) else {
                throw fail("'\(part)' is not host:port")
            }
            seeds.append(seed)
        }
        guard !seeds.isEmpty else { throw fail("no seed node") }
        for item in query.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.first == "name" else { throw fail("unknown option '\(pair.first ?? "")' (supported: name)") }
            node.clientName = pair.count > 1 ? String(pair[1]).removingPercentEncoding : nil
        }
        self.init(seeds: seeds, node: node)
    }

    /// The URL without credentials, safe for logs.
    package var redactedURL: String {
        let credentials = (node.username != nil || node.password != nil) ? "***@" : ""
        return "\(Self.scheme)://\(credentials)\(seeds.map(\.description).joined(separator: ","))"
    }

    /// The connection settings for one node.
    package func configuration(for node: ClusterNode) -> RedisConfiguration {
        var configuration = self.node
        configuration.host = node.host
        configuration.port = node.port
        configuration.database = 0
        return configuration
    }
}
