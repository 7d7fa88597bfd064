import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// Prometheus through swift-metrics for a whole process, with histogram buckets from 100 µs to
/// 60 s (the library's default starts at 5 ms, too coarse for render and send times).
enum MetricsSetup {
    static let buckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
    ]

    static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = buckets
        MetricsSystem.bootstrap(factory)
        return registry
    }

    /// A small HTTP server for a process that has no API of its own (the worker): `GET /metrics`
    /// in the Prometheus text format and `GET /health/live`.
    static func server(registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger) -> some Service {
        let router = Router()
        router.get("metrics") { _, _ in
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.get("health/live") { _, _ in "ok" }
        // Said on stderr whatever the log level, as the simulators say theirs: with port 0 this
        // line is the only way to learn the port (tests use it; a port found free beforehand can
        // be taken before the worker binds it).
        return Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                FileHandle.standardError.write(Data("worker: metrics listening on http://\(host):\(bound)/metrics\n".utf8))
            }, logger: logger)
    }
}
