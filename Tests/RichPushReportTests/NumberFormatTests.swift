import Testing

@testable import RichPushReport

@Suite("Number formatting")
struct NumberFormatTests {
    @Test func countsAreGrouped() {
        #expect(NumberFormat.count(0) == "0")
        #expect(NumberFormat.count(999) == "999")
        #expect(NumberFormat.count(1000) == "1,000")
        #expect(NumberFormat.count(2_000_000) == "2,000,000")
        #expect(NumberFormat.count(-22417) == "-22,417")
        #expect(NumberFormat.count(Int.min) == "-9,223,372,036,854,775,808")
    }

    @Test func ratesAreWholeAboveTen() {
        #expect(NumberFormat.rate(22417.4) == "22,417")
        #expect(NumberFormat.rate(22417.5) == "22,418")
        #expect(NumberFormat.rate(4.54) == "4.5")
        #expect(NumberFormat.rate(0) == "0.0")
        #expect(NumberFormat.rate(.nan) == "–")
    }

    @Test func latenciesHaveOneDecimal() {
        #expect(NumberFormat.latency(2.94) == "2.9")
        #expect(NumberFormat.latency(7.25) == "7.3")
        #expect(NumberFormat.latency(22) == "22.0")
        #expect(NumberFormat.latency(12345.67) == "12,345.7")
        #expect(NumberFormat.latency(-0.04) == "0.0")
        #expect(NumberFormat.latency(0.05) == "0.1")
    }

    @Test func compactStripsTrailingZeros() {
        #expect(NumberFormat.compact(100) == "100")
        #expect(NumberFormat.compact(2.5) == "2.5")
        #expect(NumberFormat.compact(0.1234) == "0.123")
        #expect(NumberFormat.compact(0.0004) == "0")
        #expect(NumberFormat.compact(-1.25) == "-1.25")
        #expect(NumberFormat.compact(1_000_000) == "1000000")
    }

    @Test func percents() {
        #expect(NumberFormat.percent(0.6) == "60%")
        #expect(NumberFormat.percent(1.0 / 3) == "33.3%")
        #expect(NumberFormat.percent(.nan) == "–")
    }
}
