import Foundation

/// Reads a process's resident memory and CPU time from /proc (Linux), for the load-test report.
package struct ProcessProbe: Sendable {
    package let name: String
    package let pid: Int32

    package struct Reading: Sendable {
        package var rssMiB: Double
        package var peakRSSMiB: Double
        package var cpuSeconds: Double
    }

    /// nil once the process is gone.
    package func read() -> Reading? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        else { return nil }
        func kibibytes(_ field: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            // "VmHWM:\t  123456 kB"; from 10 million kB on there is no space after the tab.
            return Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "0") ?? 0
        }
        // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Reading(rssMiB: kibibytes("VmRSS") / 1024, peakRSSMiB: kibibytes("VmHWM") / 1024, cpuSeconds: (user + system) / ticks)
    }

    /// Parses `name=pid`, as `--watch-pid` takes it.
    package init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty, let pid = Int32(parts[1]), pid > 0 else { return nil }
        self.init(name: String(parts[0]), pid: pid)
    }

    package init(name: String, pid: Int32) {
        self.name = name
        self.pid = pid
    }
}
