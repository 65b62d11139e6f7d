// swift-tools-version: 6.0
// An app's package using Trendy Core the way an iOS app would: by its library products, with
// its own composition root and the Testing products' fakes. CI builds and runs it.
import PackageDescription

let package = Package(
    name: "TrendyConsumer",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(name: "TrendyCore", path: "../..")],
    targets: [
        .executableTarget(
            name: "TrendyConsumer",
            dependencies: [
                .product(name: "TrendyAuth", package: "TrendyCore"),
                .product(name: "TrendyAuthTesting", package: "TrendyCore"),
                .product(name: "TrendyLogging", package: "TrendyCore"),
                .product(name: "TrendyModels", package: "TrendyCore"),
                .product(name: "TrendyOnboarding", package: "TrendyCore"),
                .product(name: "TrendyOnboardingTesting", package: "TrendyCore"),
                .product(name: "TrendyRouting", package: "TrendyCore"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
