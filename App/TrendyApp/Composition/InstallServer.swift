import Foundation
import TrendyFiles
import TrendyModels

/// Which server an install belongs to, kept beside its session (`server.json`): the one it was
/// signed in on. An install signed in on a server and started without `--api-url` used to talk
/// to the embedded backend, which rejected the session — and the session was deleted (outside
/// tester, issue 32). Started with no server given, an install signed in keeps to its server;
/// a server given explicitly is used (the server moved, a test points it at a dead one) but not
/// remembered while signed in. Signed out, the server given is remembered.
struct InstallServer: Codable, Equatable {
    /// The API root; nil: the embedded backend.
    var apiURL: String?
    /// The auth root, when it was given apart from the API's.
    var authURL: String?

    enum CodingKeys: String, CodingKey {
        case apiURL = "api_url"
        case authURL = "auth_url"
    }

    init(_ backend: BackendOptions) {
        apiURL = backend.apiURL?.absoluteString
        authURL = backend.authURL?.absoluteString
    }

    static func file(_ paths: AppPaths) -> URL { paths.dataDirectory.appendingPathComponent("server.json") }

    static func remembered(_ paths: AppPaths) -> InstallServer? {
        (try? OwnerOnlyFile.read(file(paths), limit: 64 * 1024)).flatMap { $0 }.flatMap {
            try? TrendyJSON.decoder().decode(InstallServer.self, from: Data($0))
        }
    }

    /// The backend to use for the install at `paths` when `given` was asked for (see the type).
    /// Reads only: ``remember(_:paths:)`` writes, once the data directory is ready.
    static func settle(_ given: BackendOptions, paths: AppPaths) -> BackendOptions {
        guard given.apiURL == nil, signedIn(paths), let home = remembered(paths),
            let api = home.apiURL.flatMap(URL.init(string:))
        else { return given }
        var kept = given
        kept.apiURL = api
        kept.authURL = home.authURL.flatMap(URL.init(string:))
        return kept
    }

    /// Signed in, and `backend` is not the server the session came from (given explicitly).
    static func isForeign(_ backend: BackendOptions, paths: AppPaths) -> Bool {
        guard signedIn(paths), let home = remembered(paths) else { return false }
        return home != InstallServer(backend)
    }

    static func signedIn(_ paths: AppPaths) -> Bool { FileManager.default.fileExists(atPath: paths.sessionFile.path) }

    /// Remembers the server the install now uses, unless it is signed in on one it remembers.
    static func remember(_ backend: BackendOptions, paths: AppPaths) {
        let used = InstallServer(backend)
        let before = remembered(paths)
        guard before != used, before == nil || !signedIn(paths), let data = try? TrendyJSON.encoder().encode(used)
        else { return }
        try? OwnerOnlyFile.write(data, to: file(paths))
    }
}
