import ArgumentParser
import RichPushAPI

/// `richpush api`'s console flags (docs/console.md).
struct ConsoleOptions: ParsableArguments {
    @Flag(help: "Serve the console read-only: every action (replay, …) is refused with 403; pages and sign-in work.")
    var consoleReadOnly = false
    @Option(help: "Hours a console session lasts from sign-in.") var consoleSessionHours: Double = 8
    @Option(help: "auto: the session cookie is Secure when a --trusted-proxies peer says X-Forwarded-Proto: https; always: always Secure.")
    var consoleSecureCookie: ConsoleConfiguration.SecureCookie = .auto

    func validate() throws {
        guard consoleSessionHours > 0, consoleSessionHours <= 24 * 30 else {
            throw ValidationError("--console-session-hours must be above 0 and at most 720")
        }
    }

    var configuration: ConsoleConfiguration {
        var configuration = ConsoleConfiguration()
        configuration.readOnly = consoleReadOnly
        configuration.sessionLifetime = .seconds(consoleSessionHours * 3600)
        configuration.secureCookie = consoleSecureCookie
        return configuration
    }
}

extension ConsoleConfiguration.SecureCookie: ExpressibleByArgument {}
