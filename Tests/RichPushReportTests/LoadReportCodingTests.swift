import Foundation
import RichPushReport
import Testing

@Suite("Report JSON")
struct LoadReportCodingTests {
    @Test func roundTrips() throws {
        let report = LoadReport.fixture(mode: "rich", lost: 3)
        #expect(try LoadReport.decode(from: report.jsonData()) == report)
        #expect(try LoadReport.decode(from: LoadReport.empty.jsonData()) == LoadReport.empty)
    }

    @Test func keysAreThePropertyNamesSorted() throws {
        let json = String(decoding: try LoadReport.fixture().jsonData(), as: UTF8.self)
        #expect(json.contains("\"deliveredPerSecond\" : 22417.4"))
        #expect(json.contains("\"peakRSSMiB\" : 60.5"))
        #expect(json.contains("\"command\" : \"richpush loadtest --notifications 1500 --report </tmp/r>\""))
        let top = ["histogram", "processes", "settings", "summary", "timeline", "workers"].map {
            json.range(of: "\n  \"\($0)\" :")!.lowerBound
        }
        #expect(top == top.sorted())
        // The overflow bucket has no bound.
        #expect(json.contains("{\n      \"count\" : 77\n    }"))
    }

    @Test func nonFiniteRatesDoNotLoseTheReport() throws {
        var report = LoadReport.empty
        report.summary.deliveredPerSecond = .infinity
        report.summary.notifiedPerSecond = .nan
        let decoded = try LoadReport.decode(from: report.jsonData())
        #expect(decoded.summary.deliveredPerSecond == .infinity)
        #expect(decoded.summary.notifiedPerSecond.isNaN)
    }
}
