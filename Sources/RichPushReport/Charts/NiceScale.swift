import Foundation

/// Axis ticks 1, 2 or 5 × 10^k apart that cover a range of data, so labels read `0, 50, 100`
/// rather than `0, 47.3, 94.6`.
struct NiceScale: Sendable, Equatable {
    /// The tick values, lowest first.
    let ticks: [Double]
    /// The values at the ends of the axis.
    let lower: Double
    let upper: Double

    /// Ticks for data from `low` to `high`, about `targetTicks` intervals. An empty or
    /// non-finite range becomes `low...low + 1`, so a flat line of zeros still has an axis.
    ///
    /// With `extendToTicks` (value axes) the axis runs from a tick at or below `low` to one at or
    /// above `high`; without (time axes) it runs from `low` to `high` exactly, ticks inside, so the
    /// last second of a run is at the right edge rather than short of it.
    init(low: Double, high: Double, targetTicks: Int = 5, extendToTicks: Bool = true) {
        let low = low.isFinite ? low : 0
        let high = high.isFinite && high > low ? high : low + 1
        let raw = (high - low) / Double(max(1, targetTicks))
        let magnitude = pow(10, log10(raw).rounded(.down))
        let step = magnitude * [1.0, 2, 5, 10].first { raw / magnitude <= $0 * (1 + 1e-9) }!
        let first = (low / step + (extendToTicks ? 1e-9 : -1e-9)).rounded(extendToTicks ? .down : .up)
        let last = (high / step + (extendToTicks ? -1e-9 : 1e-9)).rounded(extendToTicks ? .up : .down)
        let ticks = (0...Int(max(0, last - first))).map { ((first + Double($0)) * step * 1e9).rounded() / 1e9 }
        self.ticks = ticks
        lower = extendToTicks ? ticks[0] : low
        upper = extendToTicks ? ticks[ticks.count - 1] : high
    }

    /// Where `value` falls between `lower` (0) and `upper` (1).
    func fraction(_ value: Double) -> Double {
        (value - lower) / (upper - lower)
    }

    /// A tick's label, every label of an axis in the same unit: `0, 5k, 10k`, not `0, 5000, 10k`.
    func label(_ tick: Double) -> String {
        let largest = max(abs(lower), abs(upper))
        switch tick == 0 ? 0 : largest {
        case 1_000_000...: return NumberFormat.compact(tick / 1_000_000, maxPlaces: 2) + "M"
        case 10_000...: return NumberFormat.compact(tick / 1_000, maxPlaces: 1) + "k"
        default: return NumberFormat.decimal(tick, maxPlaces: 3)
        }
    }
}
