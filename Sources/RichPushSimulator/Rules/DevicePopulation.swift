import Foundation
import RichPushCore

/// How a fleet of simulated devices is split over the ``DeviceCondition``s: each device's
/// condition is fixed by its index and the seed, so a run repeats with the same `--seed`.
///
/// Written as `condition=weight` pairs separated by commas (`foreground=20,background=50,force-quit=10,offline=10,doze=10`),
/// or the same as a JSON object in a file (`{"foreground": 20, "background": 50}`); weights are
/// relative (they need not add up to 100).
package struct DevicePopulation: Sendable, Hashable {
    /// Each condition's share of the fleet, in ``DeviceCondition`` order, adding up to 1.
    package let shares: [(condition: DeviceCondition, share: Double)]
    /// Every other device in the foreground, the others in the background, whatever the seed
    /// (`--app-state mixed`).
    package let alternating: Bool

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.alternating == rhs.alternating && lhs.shares.elementsEqual(rhs.shares) { $0 == $1 }
    }
    package func hash(into hasher: inout Hasher) {
        hasher.combine(alternating)
        for (condition, share) in shares {
            hasher.combine(condition)
            hasher.combine(share)
        }
    }

    /// The most pairs a population names (one per condition).
    static let maxPairs = DeviceCondition.allCases.count

    /// Every device in `condition`.
    package static func all(_ condition: DeviceCondition) -> DevicePopulation {
        DevicePopulation(shares: [(condition, 1)], alternating: false)
    }

    /// Every other device (0, 2, 4…) in the foreground, the others in the background.
    package static let alternating = DevicePopulation(shares: [(.foreground, 0.5), (.background, 0.5)], alternating: true)

    private init(shares: [(condition: DeviceCondition, share: Double)], alternating: Bool) {
        self.shares = shares
        self.alternating = alternating
    }

    /// From `weights` (each at least 0, at least one above 0).
    package init(weights: [DeviceCondition: Double]) throws(SimulatorError) {
        guard weights.values.allSatisfy({ $0 >= 0 && $0.isFinite && $0 <= 1_000_000 }) else {
            throw SimulatorError("a population weight must be a number from 0 to 1000000")
        }
        let total = weights.values.reduce(0, +)
        guard total > 0 else { throw SimulatorError("a population needs at least one condition with a weight above 0") }
        self.init(
            shares: DeviceCondition.allCases.compactMap { condition in
                weights[condition].flatMap { $0 > 0 ? (condition, $0 / total) : nil }
            }, alternating: false)
    }

    /// Parses `condition=weight,…`, or, when `text` starts with `{`, a JSON object of weights.
    package init(parsing text: String) throws(SimulatorError) {
        guard text.utf8.count <= 4096 else { throw SimulatorError("a population is at most 4096 bytes") }
        var weights: [DeviceCondition: Double] = [:]
        var pairs: [(String, Double?)] = []
        if text.trimmingPrefix(while: \.isWhitespace).hasPrefix("{") {
            guard case .object(let fields) = JSONValue.parse(Array(text.utf8)) else {
                throw SimulatorError("the population is not a JSON object of condition: weight")
            }
            pairs = fields.map { field in
                guard case .number(let text) = field.value else { return (field.key, nil) }
                return (field.key, Double(text))
            }
        } else {
            for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else {
                    throw SimulatorError("'\(pair.prefix(40))' is not condition=weight (for example background=50)")
                }
                pairs.append((parts[0].trimmingCharacters(in: .whitespaces), Double(parts[1].trimmingCharacters(in: .whitespaces))))
            }
        }
        guard pairs.count <= Self.maxPairs else { throw SimulatorError("a population names at most \(Self.maxPairs) conditions") }
        for (name, weight) in pairs {
            guard let condition = DeviceCondition(rawValue: name) else {
                throw SimulatorError(
                    "unknown device condition '\(name.prefix(40))': use \(DeviceCondition.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            guard let weight else { throw SimulatorError("the weight of \(name) is not a number") }
            guard weights.updateValue(weight, forKey: condition) == nil else { throw SimulatorError("\(name) is named twice") }
        }
        try self.init(weights: weights)
    }

    /// The condition of device `index`: a value in 0..<1 fixed by the index and the seed, placed
    /// on the shares laid end to end.
    package func condition(of index: Int, seed: UInt64) -> DeviceCondition {
        if alternating { return index % 2 == 0 ? .foreground : .background }
        let point = SimulationRandom.stableUnit(of: "device-\(index)", seed: seed)
        var edge = 0.0
        for (condition, share) in shares {
            edge += share
            if point < edge { return condition }
        }
        return shares[shares.count - 1].condition
    }

    /// `condition=percent,…`, as it was given in weights.
    package var description: String {
        alternating
            ? "every other device foreground, the others background"
            : shares.map { "\($0.condition.rawValue)=\(Self.percent($0.share))" }.joined(separator: ",")
    }

    private static func percent(_ share: Double) -> String {
        let value = (share * 1000).rounded() / 10
        return value == value.rounded() ? "\(Int(value))%" : "\(value)%"
    }
}
