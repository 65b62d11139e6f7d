import Logging

/// What a live module contributes to the app's start-up and lifecycle.
///
/// The composition root holds the list of modules (``AppEnvironment/modules``); adding a module
/// is adding its target and one registration line. Hooks run in registration order on launch
/// and foreground, and in reverse order on background.
public protocol AppModule: Sendable {
    /// A short name for logs and health reports.
    var name: String { get }
    /// Runs once after the first frame, off the main actor.
    func didLaunch() async
    /// Runs when the app returns to the foreground.
    func willEnterForeground() async
    /// Runs when the app goes to the background: persist and release.
    func didEnterBackground() async
    /// The module's current health.
    func health() async -> ModuleHealth
}

extension AppModule {
    /// Nothing to do by default.
    public func didLaunch() async {}
    /// Nothing to do by default.
    public func willEnterForeground() async {}
    /// Nothing to do by default.
    public func didEnterBackground() async {}
}

/// One module's health: ok or not, with details for people.
public struct ModuleHealth: Sendable, Equatable, Codable {
    /// The module's name.
    public var module: String
    /// Whether it works as it should.
    public var ok: Bool
    /// Readable facts (`log_directory: /…`, `fallback: stderr`).
    public var details: [String: String]

    /// Creates a report.
    public init(module: String, ok: Bool, details: [String: String] = [:]) {
        self.module = module
        self.ok = ok
        self.details = details
    }
}
