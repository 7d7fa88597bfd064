import Foundation
package import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import RichPushAPNS
import RichPushCore
package import RichPushSimTLS

/// The local APNs: HTTP/2 over TLS (ALPN `h2`) with the certificate of ``LocalCertificates``,
/// judging every request by ``APNSServerRules`` and answering as Apple does (`apns-id` on every
/// answer; `{"reason": …}` on refusals, with `timestamp` on 410). Like Apple with token
/// authentication, a connection allows one stream until a request with a valid token succeeds,
/// then `maxStreams`, and falls back to one after a refused request. ``APNSFaultPlan`` adds
/// Apple's bad days: error answers, slow answers, GOAWAY.
package final class APNSSimulatorServer: Sendable {
    package let port: Int
    private let channel: any Channel

    /// One line of JSON per request (method, path, status, reason, apns-id, push type, topic,
    /// headers sent with HPACK indexing among `:path` and `authorization`, injected or not).
    package typealias RequestLog = @Sendable (String) -> Void

    /// A push Apple would have accepted, for whatever stands in for the device (the hub).
    package struct AcceptedPush: Sendable {
        package let deviceToken: String
        package let headers: [String: String]
        package let payload: [UInt8]
        package let apnsID: String
    }

    /// Called on the connection's event loop for each accepted push: must not block.
    package typealias Forward = @Sendable (AcceptedPush) -> Void

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// `cleartext`: HTTP/2 with prior knowledge, no TLS (for clients that ask for it explicitly).
    package static func start(
        host: String = "127.0.0.1", port: Int = 0, certificates: LocalCertificates, rules: APNSServerRules,
        maxStreams: Int = 1000, faults: APNSFaultPlan = APNSFaultPlan(), cleartext: Bool = false,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        log: RequestLog? = nil, logPayloads: Bool = false, forward: Forward? = nil
    ) async throws -> APNSSimulatorServer {
        var tls = try certificates.serverTLS(applicationProtocols: ["h2"])
        tls.minimumTLSVersion = .tlsv12
        let context = cleartext ? nil : try NIOSSLContext(configuration: tls)
        let shared = APNSSimulatorStreamHandler.Shared(
            rules: rules, maxStreams: maxStreams, faults: faults, random: SimulationRandom(seed: faults.seed),
            log: log, logPayloads: logPayloads, forward: forward)
        let channel = try await LocalHTTP2Server.bind(
            host: host, port: port, tls: context,
            settings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 1)], group: group
        ) {
            // Per connection: whether its stream limit was raised, its highest stream, its answers.
            let connection = APNSSimulatorConnection()
            return { stream in
                try stream.pipeline.syncOperations.addHandler(APNSSimulatorStreamHandler(shared: shared, connection: connection))
            }
        }
        return APNSSimulatorServer(channel: channel, port: channel.localAddress?.port ?? port)
    }

    package func stop() async throws {
        try await channel.close()
    }
}
