import ServiceLifecycle

/// Runs a ``DeviceSimulator`` in a `ServiceGroup`: handles pushes until the group shuts down
/// (SIGTERM, SIGINT) or until `limit` pushes were handled, which ends the group.
package struct DeviceSimulatorService: Service {
    let simulator: DeviceSimulator
    let limit: Int?

    package init(simulator: DeviceSimulator, limit: Int? = nil) {
        self.simulator = simulator
        self.limit = limit
    }

    package func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await simulator.run(limit: limit) }
            group.addTask {
                do {
                    try await gracefulShutdown()
                } catch {
                    return  // cancelled: run() ended first
                }
                await simulator.stop()
            }
            try await group.next()
            group.cancelAll()
            try await group.waitForAll()
        }
    }
}
