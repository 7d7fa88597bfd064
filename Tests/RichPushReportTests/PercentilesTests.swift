import RichPushReport
import Testing

@Suite("Percentiles")
struct PercentilesTests {
    /// Within HdrHistogram's three significant digits of the nearest-rank value.
    static func close(_ value: Double?, _ expected: Double) -> Bool {
        value.map { abs($0 - expected) <= expected * 0.001 } ?? false
    }

    @Test func oneToHundredMilliseconds() throws {
        var recorder = LatencyRecorder()
        for ms in (1...100).shuffled() { recorder.record(ms: Double(ms)) }
        let percentiles = try #require(recorder.percentiles)
        #expect(Self.close(percentiles.p50, 50) && Self.close(percentiles.p90, 90) && Self.close(percentiles.p99, 99))
        #expect(percentiles.max == 100 && percentiles.count == 100)
    }

    @Test func smallValuesStayExact() throws {
        var recorder = LatencyRecorder()
        for ms in [0.004, 0.001, 0.003, 0.002] { recorder.record(ms: ms) }
        #expect(recorder.percentiles == Percentiles(p50: 0.002, p90: 0.004, p99: 0.004, max: 0.004, count: 4))
    }

    @Test func emptyOrNonFiniteIsNilAndResetEmpties() {
        var recorder = LatencyRecorder()
        #expect(recorder.percentiles == nil)
        recorder.record(ms: .nan)
        recorder.record(ms: .infinity)
        #expect(recorder.percentiles == nil)
        recorder.record(ms: -2)  // clock skew counts as 0
        recorder.record(ms: 3)
        #expect(recorder.percentiles?.count == 2)
        recorder.reset()
        #expect(recorder.percentiles == nil)
    }

    @Test func aMillionLatenciesTakeFixedMemory() throws {
        var recorder = LatencyRecorder()
        for index in 0..<1_000_000 { recorder.record(ms: Double(index % 5000) / 10) }
        let percentiles = try #require(recorder.percentiles)
        #expect(percentiles.count == 1_000_000)
        #expect(Self.close(percentiles.p99, 495))
    }
}
