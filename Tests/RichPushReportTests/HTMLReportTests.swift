import Foundation
import RichPushReport
import Testing

@Suite("HTML report")
struct HTMLReportTests {
    /// The page's SVG elements, each fragment required to be well-formed XML.
    private func svgElements(_ html: String) throws -> [Element] {
        let fragments = html.svgFragments
        #expect(fragments.count == 7)
        return try fragments.flatMap { try parseXML($0).get() }
    }

    @Test func isACompletePage() {
        let html = HTMLReport.render(.fixture())
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.hasSuffix("</html>\n"))
        #expect(html.contains("<title>RichPush load test: 22,417 pushes/s, silent mode</title>"))
        #expect(html.contains("silent mode · audience one · shape max · 1,500 notifications · 1,000 devices · 2 workers · rate unlimited"))
        for external in ["http://", "https://", "src=", "<link", "@import", "@keyframes", "animation"] {
            #expect(!html.replacing("http://www.w3.org/2000/svg", with: "").contains(external), "\(external)")
        }
    }

    /// The CPU budget: each process's CPU seconds over the notifications, in the table and as bars.
    @Test func cpuBudgetPerNotification() {
        var report = LoadReport.fixture()
        report.processes.append(ProcessSummary(name: "loadtest", pid: 103, peakRSSMiB: 80, cpuSeconds: 0.75))
        let html = HTMLReport.render(report)
        // 1 s, 4.5 s and 0.75 s of CPU over 1,500 notifications.
        #expect(html.contains("data-key=\"cpuMicrosPerNotification\">666.7</td>"))
        #expect(html.contains("data-key=\"cpuMicrosPerNotification\">3,000.0</td>"))
        #expect(html.contains("data-key=\"cpuMicrosPerNotification\">500.0</td>"))
        #expect(html.contains("data-name=\"CPU µs per notification\" data-values=\"667,3000,500\""))
        #expect(html.contains("loadtest (load generator)"))
        #expect(report.serviceCPUMicrosPerNotification.rounded() == 3667)
    }

    @Test func embeddedJSONDecodesToTheReport() throws {
        let report = LoadReport.fixture(mode: "rich", lost: 2)
        let html = HTMLReport.render(report)
        let json = try #require(html.between("<script type=\"application/json\" id=\"report-data\">", "</script>"))
        #expect(!json.contains("</"))
        #expect(json.contains("--report <\\/tmp/r>"))
        #expect(try LoadReport.decode(from: Data(json.utf8)) == report)
    }

    @Test func summaryTableShowsTheFigures() {
        let html = HTMLReport.render(.fixture())
        #expect(html.contains("data-key=\"deliveredPerSecond\">22,417</td>"))
        #expect(html.contains("data-key=\"delivered\">1,500</td>"))
        #expect(html.contains("data-key=\"lost\">0</td>"))
        #expect(html.contains("data-key=\"seconds\">5.0</td>"))
        #expect(html.contains("data-key=\"enqueueToDeviceMs.p50\">2.9</td>"))
        #expect(html.contains("data-key=\"enqueueToDeviceMs.p99\">7.3</td>"))
        #expect(html.contains("data-key=\"enqueueToDeviceMs.max\">22.2</td>"))
        #expect(!html.contains("data-key=\"notifiedPerSecond\""))
        #expect(html.contains("class=\"verdict ok\""))
    }

    @Test func richModeShowsNotifications() {
        let html = HTMLReport.render(.fixture(mode: "rich"))
        #expect(html.contains("data-key=\"notifiedPerSecond\">1,217</td>"))
        #expect(html.contains("data-key=\"enqueueToNotificationMs.p99\">55.6</td>"))
    }

    @Test func lostAndDuplicatedAreRed() {
        let html = HTMLReport.render(.fixture(lost: 12, duplicated: 3))
        #expect(html.contains("<td class=\"num bad\" data-key=\"lost\">12</td>"))
        #expect(html.contains("<td class=\"num bad\" data-key=\"duplicated\">3</td>"))
        #expect(html.contains("<td class=\"num\" data-key=\"failed\">0</td>"))
        #expect(html.contains("<p class=\"verdict bad\">12 lost, 3 duplicated of 1,500 expected pushes.</p>"))
        #expect(!HTMLReport.render(.fixture()).contains("class=\"num bad\""))
    }

    @Test func chartsDrawTheReportedNumbers() throws {
        let elements = try svgElements(HTMLReport.render(.fixture()))
        let throughput = elements.chart("throughput")
        #expect(throughput.values(ofSeries: "delivered/s") == "100,200,300,400,500")
        #expect(throughput.values(ofSeries: "sent/s") == "300,300,300,300,300")
        let latency = elements.chart("latency")
        #expect(latency.values(ofSeries: "p50") == "1,2,3,4,5")
        #expect(latency.values(ofSeries: "p99") == "3,6,9,12,15")
        let queue = elements.chart("queue")
        #expect(queue.values(ofSeries: "lag") == "800,600,400,200,0")
        #expect(queue.values(ofSeries: "pending") == "10,20,30,40,50")
        let memory = elements.chart("memory")
        #expect(memory.values(ofSeries: "api") == "41,42,43,44,45")
        #expect(memory.values(ofSeries: "worker-1") == "60.5,60.5,60.5,60.5,60.5")
    }

    @Test func histogramBarsCountTheBuckets() throws {
        let report = LoadReport.fixture()
        let bars = try svgElements(HTMLReport.render(report)).chart("histogram").bars
        #expect(bars.map { Int($0.attributes["data-count"] ?? "") } == report.histogram.map(\.count))
        #expect(bars.map { $0.attributes["data-label"] } == ["≤0.25 ms", "≤0.5 ms", "≤1 ms", "≤2 ms", "≤4 ms", "> 4 ms"])
    }

    @Test func workerChartShowsShares() throws {
        let workers = try svgElements(HTMLReport.render(.fixture())).chart("workers")
        #expect(workers.bars.map { $0.attributes["data-count"] } == ["600", "400"])
        let values = workers.filter { $0.attributes["class"] == "value" }.map(\.text)
        #expect(values == ["600 (60%)", "400 (40%)"])
    }

    @Test func markupInNamesIsEscaped() throws {
        let html = HTMLReport.render(.fixture(consumers: ["a<b&c", "\"quoted\""]))
        let workers = try svgElements(html).chart("workers")
        #expect(workers.bars.map { $0.attributes["data-label"] } == ["a<b&c", "\"quoted\""])
        #expect(html.contains("data-label=\"a&lt;b&amp;c\""))
        #expect(html.contains("<code>richpush loadtest --notifications 1500 --report &lt;/tmp/r&gt;</code>"))
        let page = html.replacing(try #require(html.between("id=\"report-data\">", "</script>")), with: "")
        #expect(!page.contains("a<b&c"))
    }

    @Test func emptyReportRendersPlaceholders() throws {
        let html = HTMLReport.render(.empty)
        let elements = try svgElements(html)
        #expect(elements.chart("throughput").values(ofSeries: "delivered/s") == "")
        #expect(elements.chart("latency").contains { $0.attributes["class"] == "empty" && $0.text == "no deliveries" })
        #expect(elements.chart("histogram").bars.isEmpty)
        #expect(elements.chart("workers").bars.isEmpty)
        #expect(html.contains("data-key=\"enqueueToDeviceMs\">no samples</td>"))
        #expect(html.contains("No process was sampled."))
    }

    @Test func latencyChartSkipsIntervalsWithoutDeliveries() throws {
        var report = LoadReport.fixture()
        report.timeline[1].latencyMs = nil
        report.timeline[2].latencyMs?.count = 0
        let latency = try svgElements(HTMLReport.render(report)).chart("latency")
        #expect(latency.values(ofSeries: "p50") == "1,4,5")
        // The gap breaks the line: the point before it stands alone as a dot, the two after are a path.
        let p50 = latency.drop { $0.attributes["data-name"] != "p50" }
        #expect(p50.dropFirst().prefix { $0.name != "g" }.map(\.name) == ["title", "circle", "path"])
    }
}
