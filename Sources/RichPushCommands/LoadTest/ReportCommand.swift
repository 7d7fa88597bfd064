import ArgumentParser
import Foundation
import RichPushReport

/// `richpush report FILE`: renders a load test's report.json again (report.html, overview.svg
/// and the terminal summary), e.g. after a change to the charts, without running the test again.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Render a load test's report.json as report.html and overview.svg again.")

    @Argument(help: "The report.json written by `richpush loadtest --report`.") var file: String
    @Option(help: "Directory to write report.html and overview.svg into (default: the file's).") var out: String?

    func run() throws {
        let input = URL(fileURLWithPath: file)
        let data: Data
        do {
            data = try Data(contentsOf: input)
        } catch {
            throw CLIError("cannot read \(file): \(error.localizedDescription)")
        }
        let report: LoadReport
        do {
            report = try LoadReport.decode(from: data)
        } catch {
            throw CLIError("\(file) is not a load-test report: \(error)")
        }
        let directory = out.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? input.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(HTMLReport.render(report).utf8).write(to: directory.appendingPathComponent("report.html"))
        try Data(OverviewSVG.render(report).utf8).write(to: directory.appendingPathComponent("overview.svg"))
        print(SummaryText.render(report))
        FileHandle.standardError.write(Data("report: wrote \(directory.path)/report.html and overview.svg\n".utf8))
    }
}
