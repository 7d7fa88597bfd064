extension LoadReport {
    /// One process's CPU time for the run divided by the notifications created.
    package struct CPUShare: Sendable, Equatable {
        package var name: String
        package var microsPerNotification: Double
    }

    /// The CPU budget per notification: each sampled process's CPU time (user + system, from
    /// `/proc`) over the run, in microseconds per notification created, in the processes' order.
    /// The load generator (`loadtest`) is listed but is not part of the service.
    package var cpuBudget: [CPUShare] {
        guard settings.notifications > 0 else { return [] }
        return processes.map { CPUShare(name: $0.name, microsPerNotification: $0.cpuSeconds * 1_000_000 / Double(settings.notifications)) }
    }

    /// The service's part of ``cpuBudget``: every process but the load generator.
    package var serviceCPUMicrosPerNotification: Double {
        cpuBudget.filter { $0.name != Self.loadGeneratorName }.reduce(0) { $0 + $1.microsPerNotification }
    }

    /// The name the load test samples itself under.
    package static let loadGeneratorName = "loadtest"
}
