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

    /// What the launch decision needs, read without `JSONDecoder` (this runs before the first
    /// frame, where a cold decoder costs more than the file read): the user's position, the
    /// device flag and the signed-out step. Falls back to ``load()`` on anything unusual.
    public func launchFacts(for userId: String?) -> LaunchFacts {
        guard let bytes = try? OwnerOnlyFile.read(file, limit: 8 << 20) else { return slowLaunchFacts(userId) }
        guard let object = WireJSONReader.parse(bytes), object["version"]?.number == 1, let state = object["state"],
            let device = state["device_saw_completed_user"]?.bool,
            let signedOut = state["signed_out_step"]?.string.flatMap(OnboardingStep.init(rawValue:))
        else { return slowLaunchFacts(userId) }
        var position: CachedOnboarding?
        if let userId, let status = state["users"]?[userId]?["status"] {
            guard let completed = status["completed"]?.bool,
                let step = status["current_step"]?.string.flatMap(OnboardingStep.init(rawValue:))
            else { return slowLaunchFacts(userId) }
            position = completed ? .completed : .inProgress(step)
        }
        return LaunchFacts(position: position, deviceSawCompletedUser: device, signedOutStep: signedOut)
    }

    func slowLaunchFacts(_ userId: String?) -> LaunchFacts {
        let state = load()
        return LaunchFacts(
            position: userId.flatMap { state.users[$0] }.map { CachedOnboarding($0.status) },
            deviceSawCompletedUser: state.deviceSawCompletedUser, signedOutStep: state.signedOutStep)
    }

    /// The cache's part of the launch decision.
    public typealias LaunchFacts = OnboardingLaunchFacts

    /// Writes the whole state atomically (0600).
    public func save(_ state: OnboardingCacheState) throws {
        let encoder = TrendyJSON.encoder()
        encoder.outputFormatting = [.sortedKeys]
        try OwnerOnlyFile.write(try encoder.encode(Envelope(version: 1, state: state)), to: file)
    }
}
