import ArgumentParser

/// When the k-th notification of a load test is due, for each shape of load.
enum LoadShape: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// As fast as the pipeline takes them.
    case max
    /// `rate` per second throughout.
    case constant
    /// From 0 up to `rate` per second, linearly, over the whole run.
    case ramp
    /// `burstSize` at once every `burstInterval` seconds.
    case burst

    struct Parameters: Sendable {
        var notifications: Int
        var rate: Int
        var burstSize: Int
        var burstInterval: Double
    }

    /// Seconds after the start when notification `k` (0-based) is due; 0 for `max`.
    func due(_ k: Int, _ p: Parameters) -> Double {
        switch self {
        case .max:
            return 0
        case .constant:
            return Double(k) / Double(p.rate)
        case .ramp:
            // rate(t) = rate · t / T sends rate · T / 2 in all, so T = 2N / rate and the k-th is
            // due when rate · t² / (2T) = k.
            let total = 2 * Double(p.notifications) / Double(p.rate)
            return total * (Double(k) / Double(p.notifications)).squareRoot()
        case .burst:
            return Double(k / p.burstSize) * p.burstInterval
        }
    }

    /// How many to create together before looking at the clock again.
    func step(_ p: Parameters) -> Int {
        switch self {
        case .max: 100
        case .constant, .ramp: Swift.max(1, p.rate / 200)
        case .burst: Swift.max(1, Swift.min(p.burstSize, 500))
        }
    }
}
