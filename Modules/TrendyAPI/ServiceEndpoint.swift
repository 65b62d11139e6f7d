import Foundation

/// Where a service is, possibly known only once it has started (the embedded backend binds a
/// free port on first use). Clients resolve it per request; a fixed URL resolves at once.
public struct ServiceEndpoint: Sendable {
    let resolver: @Sendable () async throws -> URL

    /// An endpoint resolved by `resolve` (called per request; cache inside if it is costly).
    public init(resolve: @escaping @Sendable () async throws -> URL) { resolver = resolve }

    /// A fixed URL.
    public static func fixed(_ url: URL) -> ServiceEndpoint { ServiceEndpoint { url } }

    /// The URL, without a trailing slash.
    public func baseString() async throws -> String {
        var text = try await resolver().absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
