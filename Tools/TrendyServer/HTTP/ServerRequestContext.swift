import Hummingbird
import Logging
import NIOCore

/// Per-request state: the request id, the caller's address, and the channel (for fault
/// injection that drops connections).
public struct ServerRequestContext: RequestContext {
    /// Hummingbird's storage.
    public var coreContext: CoreRequestContextStorage
    /// The request id (`X-Request-ID`, echoed or generated).
    public var requestId: String = ""
    /// The peer's IP address.
    public let remoteAddress: String
    let channel: any Channel
    /// The body limit, from the server configuration (set by the first middleware).
    public var maxBodySize = 4 * 1024 * 1024

    /// Creates the context for a new request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Upload limit used by Hummingbird's own decoders.
    public var maxUploadSize: Int { maxBodySize }
}
