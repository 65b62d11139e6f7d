import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TrendyAPI

/// The app's HTTP client and what its failures mean, shared by the API and auth clients so both
/// say "offline" the same way and equally fast.
///
/// A refused or unroutable connection fails at once (AsyncHTTPClient would otherwise retry a
/// refused connection until its connect timeout: the 10 s offline freeze); a connection that
/// does not complete fails after ``NetworkBudget/respond``; an answer that stalls fails after
/// ``NetworkBudget/idle`` of silence.
public enum HTTPTransport {
    /// A client configured for `budget`. The caller owns it and shuts it down.
    public static func makeClient(budget: NetworkBudget) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = HTTPClient.Configuration.Timeout(
            connect: .nanoseconds(budget.respond.nanoseconds), read: .nanoseconds(budget.idle.nanoseconds))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// What `error` (thrown by `HTTPClient.execute` or reading the body) means for a request to
    /// `url` that had `deadline` to complete and was sent by a client with `budget`.
    public static func failure(
        _ error: any Error, url: String, deadline: Duration, budget: NetworkBudget
    ) -> TransportFailure {
        let server = serverName(url)
        if error is CancellationError { return .cancelled }
        if let e = error as? HTTPClientError {
            switch e {
            case .connectTimeout: return .notResponding(server: server, seconds: budget.respond.asSeconds)
            case .deadlineExceeded: return .notResponding(server: server, seconds: deadline.asSeconds)
            case .readTimeout, .writeTimeout: return .notResponding(server: server, seconds: budget.idle.asSeconds)
            case .cancelled: return .cancelled
            case .remoteConnectionClosed: return .connectionLost("the server closed the connection")
            default: break
            }
        }
        if error is HTTPParserError {
            return .unreachable(server: server, reason: "it does not answer in HTTP")
        }
        if let connection = error as? NIOConnectionError {
            if connection.dnsAError != nil || connection.dnsAAAAError != nil, connection.connectionErrors.isEmpty {
                return .unreachable(server: server, reason: "its name does not resolve")
            }
            // Every address failed: refused wins over unreachable (something answered).
            let codes = connection.connectionErrors.compactMap { errno(in: $0.error) }
            if codes.contains(ECONNREFUSED) { return .refused(server: server) }
            if let code = codes.first { return failure(errno: code, server: server, budget: budget) }
        }
        if let code = errno(in: error) { return failure(errno: code, server: server, budget: budget) }
        if case .connectTimeout? = error as? ChannelError {
            return .notResponding(server: server, seconds: budget.respond.asSeconds)
        }
        return .connectionLost(String(describing: error))
    }

    static func failure(errno code: Int32, server: String, budget: NetworkBudget) -> TransportFailure {
        switch code {
        case ECONNREFUSED: return .refused(server: server)
        case ENETUNREACH: return .unreachable(server: server, reason: "no route to its network")
        case EHOSTUNREACH: return .unreachable(server: server, reason: "no route to the host")
        case ENETDOWN: return .unreachable(server: server, reason: "the network is down")
        case EADDRNOTAVAIL: return .unreachable(server: server, reason: "the address is not available")
        case EACCES, EPERM: return .unreachable(server: server, reason: "the connection is not permitted")
        case ETIMEDOUT: return .notResponding(server: server, seconds: budget.respond.asSeconds)
        case ECONNRESET, EPIPE: return .connectionLost("the server reset the connection")
        default: return .unreachable(server: server, reason: String(cString: strerror(code)).lowercased())
        }
    }

    static func errno(in error: any Error) -> Int32? {
        if let io = error as? IOError { return io.errnoCode }
        if let connection = error as? NIOConnectionError {
            return connection.connectionErrors.lazy.compactMap { errno(in: $0.error) }.first
        }
        return nil
    }

    /// `host:port` of a URL (the port defaulted from the scheme), for messages.
    public static func serverName(_ url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        let port = components.port ?? (components.scheme == "https" ? 443 : 80)
        return host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension Duration {
    /// Whole nanoseconds (saturating at Int64).
    public var nanoseconds: Int64 {
        let (s, a) = components
        let (product, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product + a / 1_000_000_000
    }
}
