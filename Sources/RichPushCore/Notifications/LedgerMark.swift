/// The first byte of a delivery ledger field (one per notification and installation), spelled
/// here once for the Redis ledger's Lua (as generated constants) and the in-memory ledger.
///
/// `recorded`: the platform's answer is kept (`R{entry}`); `leased`: a worker holds the pair until
/// a time (`L:<until ms>:<owner>`); `tried`: its lease was given back, free to lease again and
/// still addressed (`T` or `T{entry}`); `failed`: failed by a dead-lettered job, free and
/// addressed as `tried` (`F{entry}`).
package enum LedgerMark: String, Sendable, CaseIterable {
    case recorded = "R"
    case leased = "L"
    case tried = "T"
    case failed = "F"

    /// The mark's byte (what `string.byte(value)` gives in Lua).
    package var byte: UInt8 { rawValue.utf8.first! }
}
