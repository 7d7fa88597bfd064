package import Hummingbird
import HummingbirdTLS
package import Logging
package import NIOCore
import NIOSSL
import RichPushCore
import RichPushNH

/// Builds the application of Notification Hubs' interface: its own HTTPS listener (`listener`),
/// NH's answers and errors, on the same stores as the API's (`dependencies`, whose `nhRules`
/// reads each app's rules). Throws when the certificate or key cannot be read.
package func buildNHApplication(
    listener: NHListener, configuration: APIConfiguration, dependencies: APIDependencies, logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    guard let read = dependencies.nhRules else { throw NHSetupError("the NH listener needs the app store's rules (a key-encryption key)") }
    let router = Router(context: APIRequestContext.self)
    router.middlewares.add(NHErrorMiddleware())
    router.middlewares.add(RequestHygieneMiddleware(maxBodyBytes: 64 * 1024))
    var apiConfiguration = configuration
    if apiConfiguration.defaultImage == nil { apiConfiguration.defaultImage = BundledResources.defaultImage }
    let apps = AppDirectory.of(dependencies)
    // Each app's rules remembered 5 s: a rotated or removed key stops signing within that time
    // on every replica, and a stream of sends costs no round trip each.
    let known = PerAppMemory<[NHAccessRule]>()
    let access = NHHubAccess(rules: { app in try await known.value(for: app) { try await read(app) ?? [] } })
    NHRoutes(
        access: access, notifications: NotificationRoutes.perApp(apps, configuration: apiConfiguration, stores: dependencies.stores)
    ).add(to: router)
    let installations = NHInstallationRoutes(
        access: access, installations: { apps.stores(for: $0).installations }, quotas: configuration.quotas)
    installations.add(to: router)
    NHRegistrationRoutes(access: access, installations: installations).add(to: router)
    let certificates: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey
    do {
        certificates = try NIOSSLCertificate.fromPEMFile(listener.certificateFile)
        key = try NIOSSLPrivateKey(file: listener.keyFile, format: .pem)
    } catch {
        throw NHSetupError("cannot read the NH listener's certificate or key (\(listener.certificateFile), \(listener.keyFile)): \(error)")
    }
    let tls = TLSConfiguration.makeServerConfiguration(
        certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
    return Application(
        router: router,
        server: try .tls(.http1(), tlsConfiguration: tls),
        configuration: .init(address: .hostname(listener.host, port: listener.port), serverName: "RichPush"),
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Why the NH listener cannot start.
package struct NHSetupError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
