// swift-tools-version: 6.2
import PackageDescription

// One settings list for every target: Swift 6 language mode comes from the tools version;
// warnings are errors so the build stays warning-free.
let swiftSettings: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "TrendyCore",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "trendy", targets: ["trendy"]),
        .executable(name: "trendy-bench", targets: ["TrendyBench"]),
        .library(name: "TrendyLogging", targets: ["TrendyLogging"]),
        .library(name: "TrendyModels", targets: ["TrendyModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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

        // MARK: App

        .target(
            name: "TrendyApp",
            dependencies: [
                "TrendyLogging",
                "TrendyModels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "App/TrendyApp",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "trendy",
            dependencies: ["TrendyApp"],
            path: "App/trendy",
            swiftSettings: swiftSettings
        ),

        // MARK: Tools

        .executableTarget(
            name: "TrendyBench",
            dependencies: [
                "TrendyLogging",
                "TrendyModels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/TrendyBench",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests

        .testTarget(
            name: "TrendyLoggingTests",
            dependencies: ["TrendyLogging", .product(name: "Logging", package: "swift-log")],
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
            name: "TrendyAppTests",
            dependencies: ["TrendyApp", "trendy"],
            path: "Tests/TrendyAppTests",
            swiftSettings: swiftSettings
        ),
    ]
)
