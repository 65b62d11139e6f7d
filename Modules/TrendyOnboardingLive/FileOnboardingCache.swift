import Foundation
import Logging
import TrendyFiles
import TrendyLogging
import TrendyModels
import TrendyOnboarding

/// The onboarding cache in one owner-only JSON file (`{"version":1,"state":{...}}`), written
/// atomically. A missing file is a fresh install; an unreadable, corrupt or unknown-version file
/// is treated as empty with a logged warning (the server is the truth and refills it), never a crash.
public final class FileOnboardingCache: OnboardingCache {
    /// The cache file.
    public let file: URL
    let logger: Logger

    /// Creates a cache stored in `file`.
    public init(file: URL, logger: Logger) {
        self.file = file
        self.logger = logger
    }

    struct Envelope: Codable {
        var version: Int
        var state: OnboardingCacheState
    }

    /// Reads the file synchronously.
    public func load() -> OnboardingCacheState {
        do {
            guard let bytes = try OwnerOnlyFile.read(file, limit: 8 << 20) else { return .empty }
            let envelope = try TrendyJSON.decoder().decode(Envelope.self, from: Data(bytes))
            guard envelope.version == 1 else {
                logger.warning(
                    "Unknown onboarding cache version; starting empty", metadata: ["version": .int(envelope.version)])
                return .empty
            }
            return envelope.state
        } catch {
            logger.warning(
                "The onboarding cache is unreadable; starting empty",
                metadata: ["reason": .string(String(describing: error))])
            return .empty
        }
    }

    /// Writes the whole state atomically (0600).
    public func save(_ state: OnboardingCacheState) throws {
        let encoder = TrendyJSON.encoder()
        encoder.outputFormatting = [.sortedKeys]
        try OwnerOnlyFile.write(try encoder.encode(Envelope(version: 1, state: state)), to: file)
    }
}
