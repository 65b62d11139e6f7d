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

    /// What a command's start decided, from one read of `server.json` and the session file.
    struct Settled {
        /// The backend to use.
        var backend: BackendOptions
        /// Signed in, and `backend` is not the server the session came from (given explicitly).
        var foreign: Bool
        /// What to write to `server.json` once the data directory is ready (nil: nothing).
        var remember: InstallServer?
    }

    /// The backend to use for the install at `paths` when `given` was asked for (see the type).
    /// Reads only: ``remember(_:paths:)`` writes what it says, once the data directory is ready.
    static func settle(_ given: BackendOptions, paths: AppPaths) -> Settled {
        let signedIn = FileManager.default.fileExists(atPath: paths.sessionFile.path)
        let home = remembered(paths)
        var backend = given
        if given.apiURL == nil, signedIn, let home, let api = home.apiURL.flatMap(URL.init(string:)) {
            backend.apiURL = api
            backend.authURL = home.authURL.flatMap(URL.init(string:))
        }
        let used = InstallServer(backend)
        return Settled(
            backend: backend, foreign: signedIn && home != nil && home != used,
            remember: home != used && (home == nil || !signedIn) ? used : nil)
    }

    /// Writes what ``settle(_:paths:)`` decided to remember.
    static func remember(_ settled: Settled, paths: AppPaths) {
        guard let used = settled.remember, let data = try? TrendyJSON.encoder().encode(used) else { return }
        try? OwnerOnlyFile.write(data, to: file(paths))
    }
}
