// swift-tools-version: 6.2
import PackageDescription

// One settings list for every target: Swift 6 language mode comes from the tools version;
// warnings are errors so the build stays warning-free.
let swiftSettings: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
    // A member is visible only where its module is imported (SE-0444): every file names what it uses.
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "TrendyCore",
    // The modules an app links (each its own library product, with its Testing product for the
    // app's tests); the tools are executables. TrendyServer and TrendyApp are not libraries:
    // the dev backend and the CLI composition root are this repository's, not an app's.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "trendy", targets: ["trendy"]),
        .executable(name: "trendy-bench", targets: ["TrendyBench"]),
        .executable(name: "trendy-server", targets: ["trendy-server"]),
        .library(name: "TrendyLogging", targets: ["TrendyLogging"]),
        .library(name: "TrendyModels", targets: ["TrendyModels"]),
        .library(name: "TrendyFiles", targets: ["TrendyFiles"]),
        .library(name: "TrendyAPI", targets: ["TrendyAPI"]),
        .library(name: "TrendyHTTP", targets: ["TrendyHTTP"]),
        .library(name: "TrendyAPILive", targets: ["TrendyAPILive"]),
        .library(name: "TrendyAPITesting", targets: ["TrendyAPITesting"]),
        .library(name: "TrendyAuth", targets: ["TrendyAuth"]),
        .library(name: "TrendyAuthLive", targets: ["TrendyAuthLive"]),
        .library(name: "TrendyAuthGoTrue", targets: ["TrendyAuthGoTrue"]),
        .library(name: "TrendyAuthTesting", targets: ["TrendyAuthTesting"]),
        .library(name: "TrendySync", targets: ["TrendySync"]),
        .library(name: "TrendySyncLive", targets: ["TrendySyncLive"]),
        .library(name: "TrendySyncTesting", targets: ["TrendySyncTesting"]),
        .library(name: "TrendyOnboarding", targets: ["TrendyOnboarding"]),
        .library(name: "TrendyOnboardingLive", targets: ["TrendyOnboardingLive"]),
        .library(name: "TrendyOnboardingTesting", targets: ["TrendyOnboardingTesting"]),
        .library(name: "TrendyRouting", targets: ["TrendyRouting"]),
        .library(name: "TrendyGeofence", targets: ["TrendyGeofence"]),
        .library(name: "TrendyGeofenceLive", targets: ["TrendyGeofenceLive"]),
        .library(name: "TrendyGeofenceTesting", targets: ["TrendyGeofenceTesting"]),
        .library(name: "TrendyInsights", targets: ["TrendyInsights"]),
        .library(name: "TrendyInsightsLive", targets: ["TrendyInsightsLive"]),
        .library(name: "TrendyInsightsTesting", targets: ["TrendyInsightsTesting"]),
        .library(name: "TrendyTestSupport", targets: ["TrendyTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // MARK: Modules

        .target(
            name: "TrendyLogging",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Modules/TrendyLogging",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyModels",
            path: "Modules/TrendyModels",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "TrendyFiles",
            path: "Modules/TrendyFiles",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAPI",
            dependencies: ["TrendyModels"],
            path: "Modules/TrendyAPI",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyHTTP",
            dependencies: [
                "TrendyAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Modules/TrendyHTTP",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAPILive",
            dependencies: [
                "TrendyAPI", "TrendySync", "TrendyOnboarding",
                "TrendyHTTP",
                "TrendyModels",
                "TrendyLogging",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Modules/TrendyAPILive",
            swiftSettings: swiftSettings
        ),

        // Test support every module's tests and the Testing products share (a manual clock, polling,
        // temporary folders, a call gate); no feature module depends on it.
        .target(
            name: "TrendyTestSupport",
            path: "Modules/TrendyTestSupport",
            swiftSettings: swiftSettings
        ),
        // The real dev server for tests that need it (start, sign up, client, stop), one copy.
        .target(
            name: "TrendyServerTestSupport",
            dependencies: [
                "TrendyServer", "TrendyAPI", "TrendyAPILive", "TrendyLogging", "TrendyModels",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tools/TrendyServerTestSupport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendySyncTesting",
            dependencies: [
                "TrendyAPI", "TrendyModels", "TrendySync", "TrendySyncLive", "TrendyLogging",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Modules/TrendySyncTesting",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAPITesting",
            dependencies: ["TrendyAPI", "TrendyModels", "TrendySync", "TrendyOnboarding", "TrendyTestSupport"],
            path: "Modules/TrendyAPITesting",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAuth",
            dependencies: ["TrendyLogging", .product(name: "Logging", package: "swift-log")],
            path: "Modules/TrendyAuth",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAuthLive",
            dependencies: [
                "TrendyAuth", "TrendyFiles", "TrendyModels", "TrendyLogging",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyAuthLive",
            swiftSettings: swiftSettings
        ),
        // The GoTrue HTTP gateway, apart from the file store so Auth's own tests build no HTTP stack.
        .target(
            name: "TrendyAuthGoTrue",
            dependencies: [
                "TrendyAuth",
                "TrendyAPI",
                "TrendyHTTP",
                "TrendyModels",
                "TrendyLogging",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Modules/TrendyAuthGoTrue",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyAuthTesting",
            dependencies: ["TrendyAuth"],
            path: "Modules/TrendyAuthTesting",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "TrendySync",
            dependencies: ["TrendyModels", "TrendyAPI"],
            path: "Modules/TrendySync",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendySyncLive",
            dependencies: [
                "TrendySync", "TrendyAPI", "TrendyModels", "TrendyLogging", "TrendyFiles",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendySyncLive",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "TrendyOnboarding",
            dependencies: [
                "TrendyModels", "TrendyAPI", "TrendyLogging", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyOnboarding",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyOnboardingLive",
            dependencies: [
                "TrendyOnboarding", "TrendyFiles", "TrendyLogging", "TrendyModels",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyOnboardingLive",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyOnboardingTesting",
            dependencies: ["TrendyOnboarding", "TrendyAPI", "TrendyTestSupport"],
            path: "Modules/TrendyOnboardingTesting",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyRouting",
            dependencies: [
                "TrendyModels", "TrendyAPI", "TrendyOnboarding", "TrendyAuth", "TrendyLogging",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyRouting",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "TrendyGeofence",
            dependencies: [
                "TrendyModels", "TrendyLogging", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyGeofence",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyGeofenceLive",
            dependencies: [
                "TrendyGeofence", "TrendySync", "TrendyModels", "TrendyFiles", "TrendyLogging",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Modules/TrendyGeofenceLive",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "TrendyGeofenceTesting",
            dependencies: ["TrendyGeofence", "TrendyModels"],
            path: "Modules/TrendyGeofenceTesting",
            swiftSettings: swiftSettings
        ),

        // Insights (issue 34): streaks, weeks, time patterns and honest correlations, pure; the
        // install database's aggregates in Live; null histories and the baseline in Testing.
        .target(
            name: "TrendyInsights",
            dependencies: ["TrendyModels"],
            path: "Modules/TrendyInsights",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyInsightsLive",
            dependencies: [
                "TrendyInsights", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Modules/TrendyInsightsLive",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TrendyInsightsTesting",
            dependencies: ["TrendyInsights"],
            path: "Modules/TrendyInsightsTesting",
            swiftSettings: swiftSettings
        ),

        // MARK: App

        .target(
            name: "TrendyApp",
            dependencies: [
                "TrendyLogging",
                "TrendyModels",
                "TrendyAPI",
                "TrendyAPILive",
                "TrendyHTTP",
                "TrendyAuth",
                "TrendyAuthLive",
                "TrendyAuthGoTrue",
                "TrendySync",
                "TrendySyncLive",
                "TrendyOnboarding",
                "TrendyOnboardingLive",
                "TrendyRouting",
                "TrendyGeofence",
                "TrendyGeofenceLive",
                "TrendyFiles",
                "TrendyInsights",
                "TrendyInsightsLive",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "App/TrendyApp",
            swiftSettings: swiftSettings
        ),
        // The dev backend as a plugin (`trendy serve`, the embedded backend): only the `trendy`
        // executable links it, so TrendyApp links no server code.
        .target(
            name: "TrendyDevBackend",
            dependencies: [
                "TrendyApp", "TrendyServer", "TrendyFiles", "TrendyLogging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "App/TrendyDevBackend",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "trendy",
            dependencies: [
                "TrendyApp", "TrendyDevBackend", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "App/trendy",
            swiftSettings: swiftSettings
        ),

        // MARK: Tools

        .target(
            name: "TrendyServer",
            dependencies: [
                "TrendyAPI",
                "TrendyInsights",
                "TrendyModels",
                "TrendyLogging",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/TrendyServer",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "trendy-server",
            dependencies: [
                "TrendyServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/trendy-server",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "TrendyBench",
            dependencies: [
                "TrendyLogging",
                "TrendyModels",
                "TrendyAPI",
                "TrendyAPILive",
                "TrendyAPITesting",
                "TrendyAuth",
                "TrendyAuthLive",
                "TrendyServer",
                "TrendySync",
                "TrendySyncLive",
                "TrendyOnboarding",
                "TrendyOnboardingLive",
                "TrendyGeofence",
                "TrendyGeofenceLive",
                "TrendyInsights",
                "TrendyInsightsLive",
                "TrendyInsightsTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tools/TrendyBench",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests

        .testTarget(
            name: "TrendyLoggingTests",
            dependencies: ["TrendyTestSupport", "TrendyLogging", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TrendyLoggingTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyModelsTests",
            dependencies: ["TrendyModels"],
            path: "Tests/TrendyModelsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyAPITests",
            dependencies: ["TrendyAPI", "TrendyModels"],
            path: "Tests/TrendyAPITests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyAuthTests",
            dependencies: [
                "TrendyTestSupport",
                "TrendyAuth", "TrendyAuthTesting", "TrendyAuthLive", "TrendyLogging",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrendyAuthTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyOnboardingTests",
            dependencies: [
                "TrendyTestSupport", "TrendyOnboarding", "TrendyOnboardingLive", "TrendyOnboardingTesting", "TrendyAPI",
                "TrendyModels",
                "TrendyLogging", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrendyOnboardingTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyRoutingTests",
            dependencies: [
                "TrendyTestSupport",
                "TrendyRouting", "TrendyOnboarding", "TrendyAuth", "TrendyAuthTesting",
                "TrendyModels", "TrendyAPI", "TrendyLogging", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrendyRoutingTests",
            swiftSettings: swiftSettings
        ),
        // Sync's own tests: the store, the rules, import, repair — no server, no HTTP client.
        .testTarget(
            name: "TrendySyncTests",
            dependencies: [
                "TrendyTestSupport", "TrendySync", "TrendySyncLive", "TrendySyncTesting", "TrendyAPI", "TrendyModels",
                "TrendyLogging",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/TrendySyncTests",
            swiftSettings: swiftSettings
        ),
        // Sync against the real dev server over HTTP: the engine, faults, load, the simulation.
        .testTarget(
            name: "TrendySyncIntegrationTests",
            dependencies: [
                "TrendyServerTestSupport",
                "TrendyTestSupport",
                "TrendySync", "TrendySyncLive", "TrendySyncTesting", "TrendyAPI", "TrendyAPILive", "TrendyAPITesting",
                "TrendyModels", "TrendyLogging", "TrendyServer", "TrendyFiles", "TrendyHTTP",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/TrendySyncIntegrationTests",
            swiftSettings: swiftSettings
        ),
        // The module's own tests: the planner, the GPX reader, the contracts of its ports' live and
        // in-memory parts — neither Sync's live store nor a server.
        .testTarget(
            name: "TrendyGeofenceTests",
            dependencies: [
                "TrendyTestSupport", "TrendyGeofence", "TrendyGeofenceLive", "TrendyGeofenceTesting", "TrendyModels",
                "TrendyLogging",
            ],
            path: "Tests/TrendyGeofenceTests",
            swiftSettings: swiftSettings
        ),
        // The geofence manager and visit ledger over a real install database with Sync's store: a
        // crossing, its event and the event's outbox entry in one transaction.
        .testTarget(
            name: "TrendyGeofenceIntegrationTests",
            dependencies: [
                "TrendyTestSupport", "TrendyGeofence", "TrendyGeofenceLive", "TrendyGeofenceTesting", "TrendySync",
                "TrendySyncLive", "TrendyModels", "TrendyLogging",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrendyGeofenceIntegrationTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyServerTests",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "TrendyAuthTesting",
                "TrendyOnboardingTesting",
                "TrendyServerTestSupport",
                "TrendyTestSupport",
                "TrendyServer",
                "TrendyAuth",
                "TrendyAuthLive",
                "TrendyAuthGoTrue",
                "TrendyAPI",
                "TrendyAPILive",
                "TrendyHTTP",
                "TrendyModels",
                "TrendyLogging",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/TrendyServerTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyAppTests",
            dependencies: [
                "TrendyServerTestSupport", "TrendyTestSupport", "TrendyAuth", "TrendyAuthTesting", "TrendySync",
                "TrendySyncTesting", "TrendyRouting", "TrendyOnboarding", "TrendyOnboardingTesting",
                "TrendyApp", "trendy", "TrendyServer", "TrendyLogging", "TrendyAPI", "TrendyAPITesting", "TrendyModels",
                "TrendyInsights", "TrendyInsightsLive", "TrendySyncLive",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TrendyAppTests",
            swiftSettings: swiftSettings
        ),
        // The device's aggregates against a scan of the events, through every write path of
        // Sync's real store (log, edit, delete, import, pull, type cascade) and settings changes.
        .testTarget(
            name: "TrendyInsightsIntegrationTests",
            dependencies: [
                "TrendyInsights", "TrendyInsightsLive", "TrendyInsightsTesting", "TrendySync", "TrendySyncLive",
                "TrendyAPI", "TrendyModels", "TrendyTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TrendyInsightsIntegrationTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TrendyInsightsTests",
            dependencies: ["TrendyInsights", "TrendyInsightsTesting"],
            path: "Tests/TrendyInsightsTests",
            swiftSettings: swiftSettings
        ),
    ]
)
