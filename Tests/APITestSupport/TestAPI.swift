import Hummingbird
import HummingbirdBcrypt
package import HummingbirdTesting
package import Logging
package import RichPushAPI
package import RichPushCore
import ServiceLifecycle

/// The API as every test starts it: ``buildApplication(configuration:dependencies:logger:onServerRunning:)``,
/// the composition root `richpush api` runs, on whatever stores the test hands it (Redis, or
/// ``InMemoryAPI``), listening on a free loopback port.
package struct TestAPI: Sendable {
    package var configuration: APIConfiguration
    package var dependencies: APIDependencies
    package var logger: Logger

    package init(
        configuration: APIConfiguration = TestAPI.configuration(), dependencies: APIDependencies, label: String = "test.api",
        logLevel: Logger.Level = .warning
    ) {
        self.configuration = configuration
        self.dependencies = dependencies
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        self.logger = logger
    }

    /// A test's configuration: loopback, port 0 (the port a parallel test's server could not
    /// take first), bcrypt cost 4 (cost 12 costs a quarter of a second per check).
    package static func configuration(_ configure: (inout APIConfiguration) -> Void = { _ in }) -> APIConfiguration {
        var configuration = APIConfiguration(host: "127.0.0.1", port: 0, auth: AuthConfiguration(bcryptCost: 4))
        configure(&configuration)
        return configuration
    }

    /// Runs `body` with a client of the live application (``PatientTestClient``: HummingbirdTesting's
    /// contract, with two minutes' patience instead of its fixed 20 s).
    package func test<T: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        try await serve { port in try await body(PatientTestClient(port: port)) }
    }

    /// Runs the application in a service group, as `richpush api` does, and `body` with the port it
    /// listens on; then stops it gracefully (cancelling the server instead makes Hummingbird log
    /// "Server shutdown error: Already closed").
    package func serve<T: Sendable>(_ body: (Int) async throws -> T) async throws -> T {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: logger) { channel in
            listening.yield(channel.localAddress?.port ?? 0)
            listening.finish()
        }
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A server that never listens (its run failed) ends the wait for its port.
                defer { listening.finish() }
                try await services.run()
            }
            var waiting = ports.makeAsyncIterator()
            guard let port = await waiting.next() else {
                // Its run's error says why.
                try await group.waitForAll()
                throw TestAPIError("the API stopped before it listened")
            }
            let result: T
            do {
                result = try await body(port)
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        }
    }

    /// The users most tests sign in as: alice and bob (role user) and root (admin).
    package static let users: [(name: String, role: User.Role)] = [("alice", .user), ("bob", .user), ("root", .admin)]

    /// Adds `users` to `store`, each with the password "<name>-pw" (bcrypt cost 4).
    package static func addUsers(_ users: [(name: String, role: User.Role)] = TestAPI.users, to store: any UserStore) async throws {
        for (name, role) in users {
            _ = try await store.create(User(name: name, role: role), passwordHash: Bcrypt.hash("\(name)-pw", cost: 4))
        }
    }
}

/// A harness's own failure, with what went wrong.
package struct TestAPIError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
