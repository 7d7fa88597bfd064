import RichPushReport
import Testing

@Suite("Overview picture")
struct OverviewSVGTests {
    @Test func isWellFormedStandaloneSVG() throws {
        let svg = OverviewSVG.render(.fixture(consumers: ["a<b&c", "w2"]))
        let elements = try parseXML(svg).get()
        let root = try #require(elements.first)
        #expect(root.name == "svg")
        #expect(root.attributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root.attributes["width"] == "960")
        #expect(root.attributes["height"] == "640")
        #expect(
            elements.filter { $0.name == "svg" }.compactMap { $0.attributes["data-chart"] } == [
                "throughput", "latency", "histogram", "queue",
            ])
        #expect(!svg.contains("href"))
        #expect(!svg.contains("<style"))
    }

    @Test func headlineAndChartsCarryTheFigures() throws {
        let report = LoadReport.fixture(lost: 4)
        let elements = try parseXML(OverviewSVG.render(report)).get()
        let figure = { (key: String) in elements.first { $0.attributes["data-key"] == key } }
        #expect(figure("deliveredPerSecond")?.text == "22,417")
        #expect(figure("p99")?.text == "7.3 ms")
        #expect(figure("lost")?.text == "4")
        #expect(figure("lost")?.attributes["class"] == "figure bad")
        #expect(figure("duplicated")?.attributes["class"] == "figure")
        #expect(elements.chart("throughput").values(ofSeries: "delivered/s") == "100,200,300,400,500")
        #expect(elements.chart("histogram").bars.map { Int($0.attributes["data-count"]!) } == report.histogram.map(\.count))
    }

    @Test func emptyReportIsStillWellFormed() throws {
        let elements = try parseXML(OverviewSVG.render(.empty)).get()
        #expect(elements.first { $0.attributes["data-key"] == "p99" }?.text == "–")
    }
}
