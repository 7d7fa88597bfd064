// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The package each product the targets use comes from, so a target names a product alone:
/// `.use("NIOCore")`.
let productPackages: [String: String] = [
    "Yams": "Yams",
    "AsyncHTTPClient": "async-http-client",
    "Histogram": "hdrhistogram-swift",
    "Hummingbird": "hummingbird",
    "HummingbirdCore": "hummingbird",
    "HummingbirdHTTP2": "hummingbird",
    "HummingbirdTLS": "hummingbird",
    "HummingbirdTesting": "hummingbird",
    "HummingbirdBcrypt": "hummingbird-auth",
    "HummingbirdWebSocket": "hummingbird-websocket",
    "ArgumentParser": "swift-argument-parser",
    "SwiftASN1": "swift-asn1",
    "X509": "swift-certificates",
    "Crypto": "swift-crypto",
    "_CryptoExtras": "swift-crypto",
    "HTTPTypes": "swift-http-types",
    "Logging": "swift-log",
    "Metrics": "swift-metrics",
    "NIOCore": "swift-nio",
    "NIOFoundationCompat": "swift-nio",
    "NIOHTTP1": "swift-nio",
    "NIOPosix": "swift-nio",
    "NIOTLS": "swift-nio",
    "NIOWebSocket": "swift-nio",
    "NIOHTTPTypes": "swift-nio-extras",
    "NIOHPACK": "swift-nio-http2",
    "NIOHTTP2": "swift-nio-http2",
    "NIOSSL": "swift-nio-ssl",
    "Prometheus": "swift-prometheus",
    "ServiceLifecycle": "swift-service-lifecycle",
    "Subprocess": "swift-subprocess",
    "SystemPackage": "swift-system",
]

extension Target.Dependency {
    static func use(_ product: String) -> Self {
        guard let package = productPackages[product] else { fatalError("Package.swift: add \(product) to productPackages") }
        return .product(name: product, package: package)
    }
}

let package = Package(
    name: "RichPush",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "richpush", targets: ["RichPushCLI"]),
        .executable(name: "richpush-bench", targets: ["RichPushBenchCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(
            name: "Hiredis",
            dependencies: ["CHiredis", .use("Logging"), .use("Crypto"), .use("ServiceLifecycle"), .use("NIOCore"), .use("NIOPosix")]
        ),
        .target(name: "RichPushCore"),
        .target(name: "RichPushTemplates"),
        .target(name: "RichPushCredentials", dependencies: ["Hiredis"]),
        .target(name: "RichPushReport", dependencies: [.use("Histogram")]),
        .target(
            name: "RichPushQueue",
            dependencies: ["Hiredis", .use("Logging"), .use("Metrics"), .use("ServiceLifecycle")]
        ),
        // Azure Notification Hubs' surface: connection strings, SAS tokens, their rules (issue 49).
        .target(name: "RichPushNH", dependencies: ["RichPushCore", .use("Crypto")]),
        .target(name: "RichPushStorage", dependencies: ["Hiredis", "RichPushCore", "RichPushQueue", .use("Crypto")]),
        // Benchmark and probe code (job types, a backlog skip between phases): no other library links it.
        .target(name: "RichPushBench", dependencies: ["Hiredis", "RichPushQueue"]),
        .target(
            name: "RichPushHTTP2",
            dependencies: [
                .use("NIOCore"), .use("NIOPosix"), .use("NIOHTTP2"), .use("NIOHPACK"), .use("NIOSSL"),
                .use("ServiceLifecycle"),
            ]
        ),
        .target(
            name: "RichPushAPNS",
            dependencies: [
                "RichPushCore", "Hiredis", "RichPushCredentials", "RichPushHTTP2", .use("Crypto"), .use("NIOCore"),
                .use("NIOPosix"), .use("NIOHTTP2"), .use("NIOHPACK"), .use("NIOSSL"), .use("ServiceLifecycle"),
            ]
        ),
        .target(
            name: "RichPushFCM",
            dependencies: [
                "RichPushCore", "Hiredis", "RichPushCredentials", "RichPushHTTP2", .use("AsyncHTTPClient"), .use("NIOCore"),
                .use("Crypto"), .use("_CryptoExtras"),
            ]
        ),
        .target(
            name: "RichPushFCMSim",
            dependencies: [
                "RichPushCore", "RichPushSimTLS", .use("Hummingbird"), .use("HummingbirdHTTP2"), .use("NIOSSL"),
                .use("Crypto"), .use("_CryptoExtras"), .use("NIOCore"),
            ]
        ),
        .target(
            name: "RichPushSimTLS",
            dependencies: [
                .use("NIOSSL"), .use("NIOCore"), .use("NIOPosix"), .use("NIOHTTP2"), .use("NIOHPACK"), .use("Crypto"),
                .use("X509"), .use("SwiftASN1"),
            ]
        ),
        .target(
            name: "RichPushAPNSSim",
            dependencies: [
                "RichPushAPNS", "RichPushSimTLS", .use("Crypto"), .use("NIOCore"), .use("NIOPosix"), .use("NIOHTTP2"),
                .use("NIOHPACK"), .use("NIOSSL"),
            ]
        ),
        .target(
            name: "RichPushApps",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushQueue", "RichPushAPNS", "RichPushFCM", "RichPushWebPush", "RichPushNH", .use("Crypto"),
            ]
        ),
        .target(
            name: "RichPushWebPush",
            dependencies: [
                "RichPushCore", "RichPushHTTP2", .use("NIOSSL"), .use("Crypto"), .use("_CryptoExtras"),
                .use("AsyncHTTPClient"), .use("NIOCore"), .use("NIOHTTP1"), .use("Logging"),
            ]
        ),
        .target(
            name: "RichPushWebPushSim",
            dependencies: [
                "RichPushCore", "RichPushSimTLS", .use("Hummingbird"), .use("HummingbirdCore"), .use("HummingbirdHTTP2"),
                .use("HummingbirdWebSocket"), .use("HTTPTypes"), .use("NIOTLS"), .use("Crypto"), .use("NIOCore"),
                .use("NIOHTTP2"), .use("NIOHPACK"), .use("NIOSSL"), .use("Logging"),
            ]
        ),
        .target(
            name: "RichPushInMemory",
            dependencies: ["RichPushCore", "RichPushQueue", .use("Crypto"), .use("ServiceLifecycle")]
        ),
        .target(name: "RichPushAdapters", dependencies: ["Hiredis", "RichPushCore"]),
        .target(
            name: "RichPushWebhooks",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushStorage", .use("AsyncHTTPClient"), .use("Crypto"), .use("Logging"),
                .use("Metrics"), .use("NIOCore"), .use("NIOHTTP1"), .use("ServiceLifecycle"),
            ]
        ),
        .target(
            name: "RichPushWorker",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushAdapters", "RichPushAPNS",
                "RichPushFCM", "RichPushHTTP2", "RichPushWebhooks", "RichPushApps", "RichPushWebPush", "RichPushTemplates",
                .use("AsyncHTTPClient"), .use("Logging"), .use("ServiceLifecycle"), .use("Metrics"),
            ]
        ),
        .target(
            name: "RichPushSimulator",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushAdapters", "RichPushWebPush", .use("AsyncHTTPClient"), .use("NIOCore"),
                .use("NIOPosix"), .use("NIOHTTP1"), .use("NIOWebSocket"), .use("NIOSSL"), .use("NIOFoundationCompat"),
                .use("Logging"), .use("ServiceLifecycle"), .use("Crypto"),
            ]
        ),
        .target(
            name: "RichPushAPI",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushApps", "RichPushWebPush",
                "RichPushTemplates", "RichPushReport", "RichPushNH", "RichPushAPNS", .use("Hummingbird"), .use("HummingbirdBcrypt"),
                .use("HummingbirdTLS"), .use("Crypto"), .use("Metrics"), .use("Prometheus"), .use("ServiceLifecycle"), .use("NIOCore"),
                .use("NIOHTTP1"), .use("NIOHTTPTypes"), .use("NIOSSL"),
            ],
            resources: [
                .copy("Resources/openapi.yaml"), .copy("Resources/default-image.png"),
                .copy("Resources/device.html"), .copy("Resources/device.js"), .copy("Resources/device.css"),
                .copy("Resources/console.js"), .copy("Resources/console.css"),
            ]
        ),
        // The commands of `richpush`, as a library: the executable runs them, and `richpush-bench`
        // wraps `worker` and `api` with what only benchmarks need.
        .target(
            name: "RichPushCommands",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushReport", "RichPushQueue", "RichPushStorage", "RichPushAPI",
                "RichPushAdapters", "RichPushWorker", "RichPushWebhooks", "RichPushSimulator", "RichPushAPNS",
                "RichPushAPNSSim", "RichPushSimTLS", "RichPushHTTP2", "RichPushFCM", "RichPushFCMSim", "RichPushApps", "RichPushNH",
                "RichPushWebPush", "RichPushWebPushSim", .use("_CryptoExtras"), .use("ArgumentParser"),
                .use("AsyncHTTPClient"), .use("NIOSSL"), .use("Hummingbird"), .use("HummingbirdBcrypt"), .use("Metrics"),
                .use("Prometheus"), .use("ServiceLifecycle"), .use("Logging"), .use("NIOPosix"),
            ]
        ),
        .executableTarget(name: "RichPushCLI", dependencies: ["RichPushCommands"]),
        // `richpush-bench`: the benchmarks of scripts/bench-*.sh; links RichPushBench, which
        // `richpush` does not.
        .executableTarget(
            name: "RichPushBenchCLI",
            dependencies: [
                "RichPushCommands", "RichPushBench", "Hiredis", "RichPushCore", "RichPushReport", "RichPushQueue", "RichPushStorage",
                "RichPushWebhooks", "RichPushSimulator", "RichPushAPNS", "RichPushAPNSSim", "RichPushSimTLS", "RichPushHTTP2",
                "RichPushFCM", "RichPushFCMSim", "RichPushWebPush", .use("_CryptoExtras"), .use("ArgumentParser"),
                .use("AsyncHTTPClient"), .use("NIOSSL"), .use("Hummingbird"), .use("ServiceLifecycle"), .use("Logging"),
                .use("Crypto"), .use("HTTPTypes"), .use("NIOCore"),
            ]
        ),
        .target(
            name: "RedisTestSupport",
            dependencies: [
                "Hiredis", "RichPushQueue", .use("Crypto"), .use("_CryptoExtras"), .use("Subprocess"),
                .use("SystemPackage"),
            ],
            path: "Tests/RedisTestSupport"
        ),
        .target(
            name: "APITestSupport",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushInMemory", .use("Hummingbird"), .use("HummingbirdTesting"),
                .use("HummingbirdBcrypt"), .use("HTTPTypes"), .use("NIOCore"), .use("NIOHTTP1"), .use("Logging"), .use("ServiceLifecycle"),
                .use("AsyncHTTPClient"),
            ],
            path: "Tests/APITestSupport"
        ),
        .target(
            name: "PlatformSimTestSupport",
            dependencies: [
                "RichPushAPNS", "RichPushAPNSSim", "RichPushFCM", "RichPushFCMSim", "RichPushSimTLS", "RichPushHTTP2",
                "RichPushCore", "RedisTestSupport", .use("AsyncHTTPClient"), .use("Crypto"), .use("NIOSSL"),
            ],
            path: "Tests/PlatformSimTestSupport"
        ),
        .testTarget(name: "RichPushQueueTests", dependencies: ["RichPushQueue", "RichPushBench", "Hiredis", "RedisTestSupport"]),
        .testTarget(
            name: "RichPushAPITests",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushApps", "RichPushNH", "Hiredis",
                "RedisTestSupport", "APITestSupport", "RichPushInMemory", .use("HummingbirdTesting"),
                .use("HummingbirdBcrypt"), .use("Yams"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushWorker", "RichPushAdapters",
                "RichPushAPNS", "RichPushAPNSSim", "RichPushWebhooks", "RichPushFCM", "RichPushFCMSim", "RichPushSimTLS",
                "RichPushHTTP2", .use("_CryptoExtras"), .use("AsyncHTTPClient"), .use("NIOSSL"), .use("Crypto"),
                "RichPushSimulator", "RichPushReport", "Hiredis", "RedisTestSupport", "RichPushCredentials", "RichPushApps",
                "APITestSupport", "PlatformSimTestSupport", "RichPushBench", "RichPushInMemory", .use("Hummingbird"),
                .use("ServiceLifecycle"), .use("HummingbirdBcrypt"),
            ],
            // Read by path (UpgradeTests), not bundled.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "RichPushWebPushTests",
            dependencies: [
                "RichPushWebPush", "RichPushWebPushSim", "RichPushCore", "RichPushSimTLS", "RichPushSimulator",
                "RedisTestSupport", .use("Logging"), .use("AsyncHTTPClient"), .use("NIOSSL"), .use("NIOPosix"),
                .use("NIOWebSocket"), .use("ServiceLifecycle"), .use("Crypto"),
            ]
        ),
        .testTarget(
            name: "RichPushAppsTests",
            dependencies: ["RichPushApps", "RichPushCore", "RichPushNH", "Hiredis", "RedisTestSupport"]
        ),
        .testTarget(name: "DeploymentTests", dependencies: ["RedisTestSupport", .use("Yams")]),
        .testTarget(name: "RichPushCoreTests", dependencies: ["RichPushCore", "RedisTestSupport"]),
        .testTarget(name: "RichPushTemplatesTests", dependencies: ["RichPushTemplates"]),
        .testTarget(name: "RichPushReportTests", dependencies: ["RichPushReport"]),
        .testTarget(name: "RichPushSimulatorTests", dependencies: ["RichPushSimulator", "RichPushCore"]),
        .testTarget(
            name: "RichPushAPNSTests",
            dependencies: [
                "RichPushAPNS", "RichPushCore", "RichPushCredentials", "Hiredis", "RedisTestSupport", .use("Crypto"),
            ]
        ),
        .testTarget(
            name: "RichPushAPNSSimTests",
            dependencies: [
                "RichPushAPNSSim", "RichPushSimTLS", "RichPushHTTP2", "RichPushAPNS", "RichPushCore", "Hiredis",
                "RedisTestSupport", "PlatformSimTestSupport", .use("Crypto"), .use("AsyncHTTPClient"), .use("NIOSSL"),
                .use("NIOCore"),
            ]
        ),
        .testTarget(
            name: "RichPushFCMTests",
            dependencies: ["RichPushFCM", "RichPushCore", .use("Crypto"), .use("_CryptoExtras")]
        ),
        .testTarget(
            name: "RichPushFCMSimTests",
            dependencies: [
                "RichPushFCMSim", "RichPushFCM", "RichPushCore", "Hiredis", "RedisTestSupport", "RichPushHTTP2",
                "RichPushSimTLS", "PlatformSimTestSupport", .use("AsyncHTTPClient"), .use("NIOSSL"), .use("Hummingbird"),
                .use("ServiceLifecycle"), .use("NIOCore"), .use("_CryptoExtras"),
            ]
        ),
        .testTarget(
            name: "RichPushWorkerTests",
            dependencies: [
                "RichPushWorker", "RichPushInMemory", "RichPushCore", "RichPushQueue", "RichPushStorage",
                "RichPushAdapters", "RichPushTemplates", "RichPushAPNS", "RichPushFCM", "RichPushWebPush", "RichPushHTTP2",
                "RedisTestSupport",
            ]
        ),
        .testTarget(name: "RichPushNHTests", dependencies: ["RichPushNH", "RichPushAPNS", "RedisTestSupport"]),
        .testTarget(name: "HiredisTests", dependencies: ["Hiredis", "RedisTestSupport"]),
    ]
)

// Every Swift target builds with the same strict settings.
for target in package.targets where target.type != .system {
    target.swiftSettings = strictSettings
}
