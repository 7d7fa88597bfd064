import RichPushReport
import Testing

@Suite("Terminal summary")
struct SummaryTextTests {
    @Test func silentMode() {
        #expect(
            SummaryText.render(.fixture()) == """
                delivered to devices   22,417 pushes/s (1,500 in 5.0 s)
                enqueue -> device      ms: p50 2.9  p90 5.1  p99 7.3  max 22.2
                lost 0  duplicated 0  failed 0
                peak RSS MiB           api 45.0, worker-1 60.5
                CPU µs / notification  api 666.7, worker-1 3,000.0; service 3,666.7
                """)
    }

    @Test func theLoadGeneratorsCPUIsShownApart() {
        var report = LoadReport.fixture()
        report.processes.append(ProcessSummary(name: "loadtest", pid: 103, peakRSSMiB: 80, cpuSeconds: 0.75))
        let last = SummaryText.render(report).split(separator: "\n").last
        #expect(last == "CPU µs / notification  api 666.7, worker-1 3,000.0; service 3,666.7 (load generator 500.0 apart)")
    }

    @Test func richModeAddsNotifications() {
        let lines = SummaryText.render(.fixture(mode: "rich", lost: 1, duplicated: 2)).split(separator: "\n")
        #expect(lines[1] == "local notifications    1,217 /s (after the background fetch)")
        #expect(lines[3] == "enqueue -> notified    ms: p50 30.0  p90 41.0  p99 55.6  max 90.0")
        #expect(lines[4] == "lost 1  duplicated 2  failed 0")
    }

    @Test func emptyReport() {
        #expect(
            SummaryText.render(.empty) == """
                delivered to devices   0.0 pushes/s (0 in 0.0 s)
                local notifications    0.0 /s (after the background fetch)
                enqueue -> device      no samples
                enqueue -> notified    no samples
                lost 0  duplicated 0  failed 0
                """)
    }
}
