import Foundation

/// Where the server's PostgreSQL database is, read from a libpq-style URL:
/// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require][&schema=name]`.
///
/// `schema` puts every table in that schema (created when missing), so several independent
/// servers can share one database; by default the tables live in `public`.
public struct PostgresLocation: Sendable, Equatable {
    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable {
        /// Plain TCP (loopback, a private network).
        case disable
        /// TLS when the server offers it, the certificate unchecked (libpq's default).
        case prefer
        /// TLS or no connection, the certificate unchecked (libpq's meaning).
        case require
        /// TLS with the certificate chain and the host name checked against the system's roots.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// Its password, if the server asks for one.
    public var password: String?
    /// The database (the role's name when absent).
    public var database: String
    /// The schema the tables live in.
    public var schema: String
    /// TLS use.
    public var tls: TLSMode

    /// Reads a URL; a clear error when it is not one this server can use.
    public init(url: String) throws(ConfigurationError) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme,
            ["postgres", "postgresql"].contains(scheme.lowercased())
        else {
            throw ConfigurationError("the database URL must look like postgres://user@host:5432/database")
        }
        guard let host = parts.host, !host.isEmpty else {
            throw ConfigurationError("the database URL has no host (postgres://user@host:5432/database)")
        }
        guard let user = parts.user, !user.isEmpty else {
            throw ConfigurationError("the database URL has no user (postgres://user@host:5432/database)")
        }
        let port = parts.port ?? 5_432
        guard (1...65_535).contains(port) else { throw ConfigurationError("the database port must be 1-65535") }
        self.host = host
        self.port = port
        self.user = user
        password = parts.password
        let path = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        database = path.isEmpty ? user : path
        schema = "public"
        tls = .prefer
        for item in parts.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw ConfigurationError("sslmode must be disable, prefer, require or verify-full")
                }
                tls = mode
            case "schema":
                guard let name = item.value, Self.isPlainIdentifier(name) else {
                    throw ConfigurationError(
                        "schema must be 1-63 lowercase letters, digits or underscores, starting with a letter")
                }
                schema = name
            default:
                throw ConfigurationError("unknown database URL parameter \(item.name) (known: sslmode, schema)")
            }
        }
    }

    /// The URL without its password, for logs and errors.
    public var redacted: String {
        "postgres://\(user)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)?schema=\(schema)"
    }

    /// The URL again, password included (for a child process's `--database`).
    public var url: String {
        var parts = URLComponents()
        parts.scheme = "postgres"
        parts.user = user
        parts.password = password
        parts.host = host
        parts.port = port
        parts.path = "/" + database
        parts.queryItems = [
            URLQueryItem(name: "sslmode", value: tls.rawValue), URLQueryItem(name: "schema", value: schema),
        ]
        return parts.string ?? redacted
    }

    /// The same database with the tables in a new schema of its own (`prefix_` and 20 random
    /// hex digits): how tests and benchmarks give each server an empty database.
    public func inFreshSchema(prefix: String) -> PostgresLocation {
        inSchema(prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20))
    }

    /// The same database with the tables in another schema.
    public func inSchema(_ name: String) -> PostgresLocation {
        var copy = self
        copy.schema = name
        return copy
    }

    /// A name that needs no quoting in SQL (the schema is spliced into DDL, never bound).
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard (1...63).contains(name.utf8.count), let first = name.utf8.first, (0x61...0x7A).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }
}
