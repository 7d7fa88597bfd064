import Synchronization

/// A small seeded generator (SplitMix64) for the local platform simulators' fault injection:
/// the same seed gives the same choices, so a failing run can be repeated.
package final class SimulationRandom: Sendable {
    private let state: Mutex<UInt64>

    package init(seed: UInt64) { state = Mutex(seed) }

    /// Uniform in 0..<1.
    package func next() -> Double {
        Self.unit(
            state.withLock { state in
                state &+= 0x9e37_79b9_7f4a_7c15
                return Self.mix(state)
            })
    }

    package func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() * Double(range.count))
    }

    /// A value in 0..<1 fixed by `text` and `seed`: a device token's fate that stays the same on
    /// every request (a dead token stays dead).
    package static func stableUnit(of text: some StringProtocol, seed: UInt64) -> Double {
        // FNV-1a, then mixed.
        var value: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        return unit(mix(value))
    }

    static func unit(_ value: UInt64) -> Double { Double(value >> 11) / Double(1 << 53) }

    static func mix(_ input: UInt64) -> UInt64 {
        var z = input
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
