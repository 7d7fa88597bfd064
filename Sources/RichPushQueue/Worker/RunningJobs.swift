/// What a worker runs now: its jobs by app, and how many of them came from bulk lanes.
struct RunningJobs: Sendable {
    var byApp: [String: Int] = [:]
    var bulk = 0

    mutating func add(_ apps: [String: Int], bulk: Int) {
        for (app, count) in apps { byApp[app, default: 0] += count }
        self.bulk += bulk
    }

    mutating func remove(_ apps: [String: Int], bulk: Int) {
        for (app, count) in apps {
            let left = (byApp[app] ?? 0) - count
            byApp[app] = left > 0 ? left : nil
        }
        self.bulk = max(self.bulk - bulk, 0)
    }
}
