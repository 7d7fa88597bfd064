// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "RichPush",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "richpush", targets: ["RichPushCLI"]),
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
            dependencies: [
                "CHiredis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "RichPushCore", swiftSettings: strictSettings),
        .target(name: "RichPushTemplates", swiftSettings: strictSettings),
        .target(name: "RichPushCredentials", dependencies: ["Hiredis"], swiftSettings: strictSettings),
        .target(
            name: "RichPushReport",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushQueue",
            dependencies: [
                "Hiredis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushStorage",
            dependencies: ["Hiredis", "RichPushCore", "RichPushQueue", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushHTTP2",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushAPNS",
            dependencies: [
                "RichPushCore", "Hiredis", "RichPushCredentials", "RichPushHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushFCM",
            dependencies: [
                "RichPushCore", "Hiredis", "RichPushCredentials", "RichPushHTTP2",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushFCMSim",
            dependencies: [
                "RichPushCore", "RichPushSimTLS",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushSimTLS",
            dependencies: [
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushAPNSSim",
            dependencies: [
                "RichPushAPNS", "RichPushSimTLS",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushApps",
            dependencies: ["Hiredis", "RichPushCore", "RichPushAPNS", "RichPushFCM", "RichPushWebPush", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushWebPush",
            dependencies: [
                "RichPushCore", "RichPushHTTP2",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushWebPushSim",
            dependencies: [
                "RichPushCore", "RichPushSimTLS",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushInMemory",
            dependencies: [
                "RichPushCore", "RichPushQueue",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushAdapters",
            dependencies: ["Hiredis", "RichPushCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushWebhooks",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushStorage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushWorker",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushAdapters", "RichPushAPNS", "RichPushFCM", "RichPushHTTP2",
                "RichPushWebhooks", "RichPushApps", "RichPushWebPush", "RichPushTemplates",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushSimulator",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushAdapters", "RichPushWebPush",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RichPushAPI",
            dependencies: [
                "Hiredis", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushApps", "RichPushWebPush", "RichPushTemplates",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            resources: [.copy("Resources/openapi.yaml"), .copy("Resources/default-image.png"),
                        .copy("Resources/device.html"), .copy("Resources/device.js"), .copy("Resources/device.css")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "RichPushCLI",
            dependencies: [
                "Hiredis",
                "RichPushCore",
                "RichPushReport",
                "RichPushQueue",
                "RichPushStorage",
                "RichPushAPI",
                "RichPushAdapters",
                "RichPushWorker",
                "RichPushWebhooks",
                "RichPushSimulator",
                "RichPushAPNS",
                "RichPushAPNSSim",
                "RichPushSimTLS",
                "RichPushHTTP2",
                "RichPushFCM",
                "RichPushFCMSim",
                "RichPushApps", "RichPushWebPush", "RichPushWebPushSim",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RedisTestSupport",
            dependencies: [
                "Hiredis", "RichPushQueue",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/RedisTestSupport",
            swiftSettings: strictSettings
        ),
        .target(
            name: "APITestSupport",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushInMemory",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/APITestSupport",
            swiftSettings: strictSettings
        ),
        .target(
            name: "PlatformSimTestSupport",
            dependencies: [
                "RichPushAPNS", "RichPushAPNSSim", "RichPushFCM", "RichPushFCMSim", "RichPushSimTLS", "RichPushHTTP2", "RichPushCore", "RedisTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/PlatformSimTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushQueueTests",
            dependencies: ["RichPushQueue", "Hiredis", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushAPITests",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushApps", "Hiredis", "RedisTestSupport",
                "APITestSupport", "RichPushInMemory",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "RichPushAPI", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushWorker", "RichPushAdapters", "RichPushAPNS", "RichPushAPNSSim",
                "RichPushWebhooks",
                "RichPushFCM", "RichPushFCMSim", "RichPushSimTLS", "RichPushHTTP2", .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                "RichPushSimulator", "RichPushReport", "Hiredis", "RedisTestSupport", "RichPushCredentials", "RichPushApps",
                "APITestSupport", "PlatformSimTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            // Read by path (UpgradeTests), not bundled.
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushWebPushTests",
            dependencies: [
                "RichPushWebPush", "RichPushWebPushSim", "RichPushCore", "RichPushSimTLS", "RichPushSimulator", "RedisTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushAppsTests",
            dependencies: ["RichPushApps", "RichPushCore", "Hiredis", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DeploymentTests",
            dependencies: ["RedisTestSupport", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushCoreTests",
            dependencies: ["RichPushCore", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushTemplatesTests",
            dependencies: ["RichPushTemplates"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushReportTests",
            dependencies: ["RichPushReport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushAPNSTests",
            dependencies: ["RichPushAPNS", "RichPushCore", "RichPushCredentials", "Hiredis", "RedisTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushAPNSSimTests",
            dependencies: [
                "RichPushAPNSSim", "RichPushSimTLS", "RichPushHTTP2", "RichPushAPNS", "RichPushCore", "Hiredis", "RedisTestSupport", "PlatformSimTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushFCMTests",
            dependencies: [
                "RichPushFCM", "RichPushCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushFCMSimTests",
            dependencies: [
                "RichPushFCMSim", "RichPushFCM", "RichPushCore", "Hiredis", "RedisTestSupport", "RichPushHTTP2", "RichPushSimTLS", "PlatformSimTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushWorkerTests",
            dependencies: ["RichPushWorker", "RichPushInMemory", "RichPushCore", "RichPushQueue", "RichPushStorage", "RichPushAdapters", "RichPushTemplates"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HiredisTests",
            dependencies: ["Hiredis", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
