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
    ],
    targets: [
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .target(
            name: "Hiredis",
            dependencies: [
                "CHiredis",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "RichPushCore", swiftSettings: strictSettings),
        .target(
            name: "RichPushQueue",
            dependencies: [
                "Hiredis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "RichPushCLI",
            dependencies: [
                "Hiredis",
                "RichPushCore",
                "RichPushQueue",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "RedisTestSupport",
            dependencies: ["Hiredis"],
            path: "Tests/RedisTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RichPushQueueTests",
            dependencies: ["RichPushQueue", "Hiredis", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HiredisTests",
            dependencies: ["Hiredis", "RedisTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
