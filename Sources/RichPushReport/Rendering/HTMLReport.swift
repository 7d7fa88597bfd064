/// The load test report as one self-contained HTML5 page (`DIR/report.html`): no scripts,
/// styles or fonts from elsewhere, charts as inline SVG, so it opens offline and can be mailed.
///
/// The page reads top down: what ran, whether anything was lost, the headline figures, then a
/// chart per question (how fast, how long, how spread, did the queue keep up, were the workers
/// used evenly, how much memory). The report itself is embedded as JSON in
/// `<script type="application/json" id="report-data">` for anyone who wants the numbers.
package enum HTMLReport {
    /// The width the charts are drawn for; the page scales them to the window.
    static let chartWidth = 720.0
    static let chartHeight = 300.0

    /// The complete page for `report`.
    package static func render(_ report: LoadReport) -> String {
        let title = "RichPush load test: \(NumberFormat.rate(report.summary.deliveredPerSecond)) pushes/s, \(report.settings.mode) mode"
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title.markupEscaped)</title>
            <style>\(style)</style>
            </head>
            <body>
            <main>

            """
        html += header(report)
        html += summaryTable(report)
        html += latencyTable(report)
        html += figures(report)
        html += processTable(report)
        html += """
            <footer>Written by <code>richpush loadtest --report</code>; the figures are in report.json beside this page, and embedded below.</footer>
            </main>
            <script type="application/json" id="report-data">\(embeddedJSON(report))</script>
            </body>
            </html>

            """
        return html
    }

    /// Charts (a) to (g), each with a line on how to read it.
    private static func figures(_ report: LoadReport) -> String {
        let (width, height) = (chartWidth, chartHeight)
        return [
            figure(
                report.throughputChart(width: width, height: height).render(),
                "Notifications created (sent/s) and pushes reaching devices (delivered/s) in each sampling interval."),
            figure(
                report.latencyChart(width: width, height: height).render(),
                "Enqueue → device latency of the pushes delivered in each interval; intervals without deliveries are left out."),
            figure(
                report.histogramChart(width: width, height: height).render(),
                "Every push of the run by enqueue → device latency; a bar counts latencies above the previous bar’s bound, up to its own."),
            figure(
                report.queueChart(width: width, height: height).render(),
                "lag: jobs no worker has read yet; pending: jobs read but not yet acknowledged. Both staying low means the workers keep up."
            ),
            figure(
                report.workerChart(width: width).render(),
                "Jobs each worker consumer handled; the dashed line is an even share."),
            figure(
                report.memoryChart(width: width, height: height).render(),
                "Resident memory of each process in each interval."),
            figure(
                report.cpuChart(width: width, height: height).render(),
                "CPU time (user + system) of each process over the run, in microseconds per notification created: the service's CPU budget, with the load generator apart."
            ),
        ].joined()
    }

    private static func figure(_ svg: String, _ caption: String) -> String {
        "<figure>\(svg)<figcaption>\(caption.markupEscaped)</figcaption></figure>\n"
    }

    /// The report's JSON, safe inside a `<script>` element: `</` (which could end it) becomes
    /// `<\/` and `<!--` becomes `\u003c!--`, both the same characters to a JSON parser.
    static func embeddedJSON(_ report: LoadReport) -> String {
        guard let data = try? report.jsonData() else { return "null" }
        return String(decoding: data, as: UTF8.self)
            .replacing("</", with: "<\\/")
            .replacing("<!--", with: "\\u003c!--")
    }
}
