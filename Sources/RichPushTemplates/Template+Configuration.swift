extension Template {
    /// The bounds a body is compiled within, so a hostile registration costs little and can
    /// crash nothing. The defaults fit every platform's payload with room to spare.
    package struct Configuration: Sendable, Hashable {
        /// The longest body, in UTF-8 bytes (APNs allows 4 KiB after rendering; a body's
        /// expressions may shrink, so the template may be longer).
        package var maxBodyBytes = 16 * 1024
        /// How deep arrays and objects may nest.
        package var maxDepth = 32
        /// How many calls (`$(…)`, `.(…)`, `%(…)`, `#(…)`) one body may hold.
        package var maxExpressions = 256
        /// How many terms (calls and literals) one `{…}` may join.
        package var maxTermsPerExpression = 64
        /// The largest `n` in `$(prop, n)` and `.(prop, n)`.
        package var maxClipLength = 100_000

        package init() {}
    }
}
