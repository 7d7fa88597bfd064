import ServiceLifecycle

/// A service that does nothing until the process stops, then runs `stop` (closes connections
/// made at run time, which no service of their own owns).
struct ShutdownOnStop: Service {
    let stop: @Sendable () -> Void

    func run() async throws {
        try? await gracefulShutdown()
        stop()
    }
}
