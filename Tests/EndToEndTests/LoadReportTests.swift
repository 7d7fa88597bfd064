import Foundation
import Hiredis
import RedisTestSupport
import RichPushQueue
import RichPushReport
import Testing

/// `richpush loadtest --report` as an operator runs it: a real process against the real API,
/// workers and Redis; the report's numbers are checked against what the queue itself counted.
@Suite("Load-test report", .serialized)
struct LoadReportTests {
    @Test func reportFilesHoldTheMeasuredNumbers() async throws {
        try await withRedisServer { server in
            // Its bursts of 100 come faster than the default quota refills (ten a second).
            try await Pipeline.start(server: server, configure: { $0.quotas.notificationsPerMinute = 0 }) { pipeline in
                try await withWorkers([pipeline.worker(consumer: "w-a"), pipeline.worker(consumer: "w-b")]) {
                    let directory = server.directory.appendingPathComponent("report")
                    let loadtest = try await ChildProcess(
                        executable: try richpushExecutable(),
                        arguments: [
                            "loadtest", "--redis-url", server.url, "--queue-prefix", pipeline.prefix, "--api",
                            pipeline.baseURL.absoluteString,
                            "--user", "root", "--password", "root-pw", "--notifications", "400", "--devices", "20",
                            "--shape", "burst", "--burst-size", "100", "--burst-interval", "0.4", "--sample-interval", "0.2",
                            "--workers", "2", "--watch-pid", "tests=\(getpid())", "--report", directory.path,
                            // The workers run in this process, beside the whole suite: their last
                            // acknowledgements were seen to come more than 30 s after the last push.
                            "--settle-timeout", "120",
                        ], logFile: server.directory.appendingPathComponent("loadtest.log"))
                    let status = try await loadtest.wait(timeout: .seconds(240))
                    let log = (try? String(contentsOf: loadtest.logFile, encoding: .utf8)) ?? ""
                    try #require(status == 0, "loadtest failed: \(log.suffix(2000))")

                    let report = try LoadReport.decode(from: Data(contentsOf: directory.appendingPathComponent("report.json")))
                    #expect(report.settings.shape == "burst")
                    #expect(report.summary.pushesExpected == 400)
                    #expect(report.summary.delivered == 400)
                    #expect(report.summary.lost == 0)
                    #expect(report.summary.duplicated == 0)
                    #expect(report.summary.enqueueToDeviceMs?.count == 400)
                    #expect(report.histogram.reduce(0) { $0 + $1.count } == 400)
                    #expect(report.timeline.count >= 3)
                    #expect(report.timeline.last?.delivered == 400)
                    // Delivered per interval adds up to the total (rate × interval length).
                    var previousT = 0.0
                    var delivered = 0.0
                    for sample in report.timeline {
                        delivered += sample.deliveredPerSecond * (sample.t - previousT)
                        previousT = sample.t
                    }
                    #expect(abs(delivered - 400) < 1)
                    // Each worker's share is what the queue counted for that consumer: every job at
                    // least once (a job whose 2 s lease ran out on a busy machine is handled again,
                    // its push suppressed by the ledger: the devices saw no duplicate, above).
                    let stats = try await pipeline.queue.stats()
                    // A job that failed after its push went out waits as a retry (three did in a
                    // full suite at load 12-19), counted when that retry is acknowledged: every
                    // job is acknowledged or waiting to be retried.
                    #expect(
                        report.workers.reduce(0) { $0 + $1.jobs } + stats.retried >= 400,
                        """
                        shares \(report.workers.map { "\($0.consumer)=\($0.jobs)" }); now: waiting \(stats.waiting), lag \(stats.lag), \
                        pending \(stats.pending), delayed \(stats.delayed), processed \(stats.processed), retried \(stats.retried), \
                        failed \(stats.failed), dead \(stats.deadLettered), by consumer \(stats.processedByConsumer); loadtest log: \(log.suffix(1500))
                        """)
                    // A retry acknowledged after the report was written (its job failed after its push
                    // went out, and waited in the delayed set) counts for its consumer now and not in
                    // the report: the queue's count is the report's, plus at most the retries.
                    for share in report.workers {
                        let now = stats.processedByConsumer[share.consumer] ?? 0
                        #expect(
                            (share.jobs...share.jobs + stats.retried).contains(now),
                            "\(share.consumer): \(share.jobs) in the report, \(now) now, \(stats.retried) retried")
                    }
                    #expect(Set(report.processes.map(\.name)) == ["loadtest", "tests"])
                    #expect(report.processes.allSatisfy { $0.peakRSSMiB > 1 })

                    let html = try String(contentsOf: directory.appendingPathComponent("report.html"), encoding: .utf8)
                    // The page carries the report itself, and its charts draw the same numbers.
                    let embedded = try #require(Self.between(html, #"<script type="application/json" id="report-data">"#, "</script>"))
                    #expect(try LoadReport.decode(from: Data(embedded.utf8)) == report)
                    let throughput = try #require(Self.series(in: html, chart: "throughput", name: "delivered/s"))
                    #expect(throughput.count == report.timeline.count)
                    for (drawn, sample) in zip(throughput, report.timeline) { #expect(abs(drawn - sample.deliveredPerSecond) < 0.001) }
                    let histogram = try #require(Self.series(in: html, chart: "histogram", name: nil))
                    #expect(histogram.map { Int($0) } == report.histogram.map(\.count))
                    let shares = try #require(Self.series(in: html, chart: "workers", name: nil))
                    #expect(shares.map { Int($0) }.sorted() == report.workers.map(\.jobs).sorted())
                    #expect(html.contains("400"))
                    let svg = try String(contentsOf: directory.appendingPathComponent("overview.svg"), encoding: .utf8)
                    #expect(svg.hasPrefix("<?xml"))
                    #expect(Self.series(in: svg, chart: "throughput", name: "delivered/s")?.count == report.timeline.count)

                    // `richpush report` renders the same page again from report.json alone.
                    let again = server.directory.appendingPathComponent("again")
                    let render = try await ChildProcess(
                        executable: try richpushExecutable(),
                        arguments: ["report", directory.appendingPathComponent("report.json").path, "--out", again.path],
                        logFile: server.directory.appendingPathComponent("report.log"))
                    #expect(try await render.wait(timeout: .seconds(30)) == 0, "\(render.log)")
                    #expect(try String(contentsOf: again.appendingPathComponent("report.html"), encoding: .utf8) == html)
                    #expect(render.log.contains("lost 0  duplicated 0"))
                }
            }
        }
    }

    /// `--via api-batch`: the notifications go 7 to a `POST /api/notifications/batch`, and the
    /// summary still counts each one by its own id (none lost, none twice). `--reset-stats-at`
    /// starts Redis's statistics over after the registrations: a command sent before is not
    /// counted, the notifications' are.
    @Test func aBatchedRunCountsEveryNotificationByItsId() async throws {
        try await withRedisServer { server in
            // Its bursts of 100 come faster than the default quota refills (ten a second).
            try await Pipeline.start(server: server, configure: { $0.quotas.notificationsPerMinute = 0 }) { pipeline in
                try await withWorkers([pipeline.worker(consumer: "w-a")]) {
                    let json = server.directory.appendingPathComponent("batch.json")
                    _ = try await pipeline.redis.send("ECHO", "before the run")
                    #expect(try await pipeline.redis.send("INFO", "commandstats").string?.contains("cmdstat_echo:") == true)
                    let loadtest = try await ChildProcess(
                        executable: try richpushExecutable(),
                        arguments: [
                            "loadtest", "--redis-url", server.url, "--queue-prefix", pipeline.prefix, "--api",
                            pipeline.baseURL.absoluteString,
                            "--user", "root", "--password", "root-pw", "--notifications", "100", "--devices", "10",
                            "--via", "api-batch", "--batch-size", "7", "--connections", "4", "--json", json.path, "--reset-stats-at",
                            server.url,
                        ], logFile: server.directory.appendingPathComponent("loadtest-batch.log"))
                    let status = try await loadtest.wait(timeout: .seconds(240))
                    try #require(status == 0, "loadtest failed: \(loadtest.log.suffix(2000))")
                    let report = try LoadReport.decode(from: Data(contentsOf: json))
                    #expect(report.settings.via == "api-batch")
                    #expect(report.summary.delivered == 100 && report.summary.lost == 0 && report.summary.duplicated == 0)
                    #expect(report.summary.enqueueToDeviceMs?.count == 100)
                    // One job per notification: none was created twice.
                    #expect(try await pipeline.redis.send("XLEN", pipeline.queue.configuration.streamKey).int == 100)
                    let stats = try await pipeline.redis.send("INFO", "commandstats").string ?? ""
                    #expect(!stats.contains("cmdstat_echo:") && stats.contains("cmdstat_evalsha:"), "\(stats)")
                }
            }
        }
    }

    static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard let from = text.range(of: start), let to = text.range(of: end, range: from.upperBound..<text.endIndex) else { return nil }
        return String(text[from.upperBound..<to.lowerBound])
    }

    /// The `data-values` of a chart's series (the first series when `name` is nil).
    static func series(in document: String, chart: String, name: String?) -> [Double]? {
        guard let chartStart = document.range(of: "data-chart=\"\(chart)\"") else { return nil }
        let rest = document[chartStart.upperBound...]
        let end = rest.range(of: "</svg>")?.lowerBound ?? rest.endIndex
        let body = String(rest[..<end])
        let marker = name.map { "data-name=\"\($0)\" data-values=\"" } ?? "data-values=\""
        guard let values = between(body, marker, "\"") else { return nil }
        return values.isEmpty ? [] : values.split(separator: ",").compactMap { Double($0) }
    }
}
