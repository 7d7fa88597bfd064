/// What a worker runs now: its jobs by scope, and how many of them came from bulk lanes.
struct RunningJobs: Sendable {
    var byScope: [String: Int] = [:]
    var bulk = 0

    mutating func add(_ scopes: [String: Int], bulk: Int) {
        for (scope, count) in scopes { byScope[scope, default: 0] += count }
        self.bulk += bulk
    }

    mutating func remove(_ scopes: [String: Int], bulk: Int) {
        for (scope, count) in scopes {
            let left = (byScope[scope] ?? 0) - count
            byScope[scope] = left > 0 ? left : nil
        }
        self.bulk = max(self.bulk - bulk, 0)
    }
}
