import Foundation
import TrendyModels
import TrendyOnboarding

/// The words of the screens both renderers draw — `trendy launch`'s first frame with the commands
/// to type, the running app with its keys — written once.
enum ScreenCopy {
    static let loading = "Loading your account…"
    static let login = "Welcome back. Sign in to see your events."
    static let errorTitle = "Trendy · Something went wrong"

    /// What an onboarding step says, before its commands or keys.
    static func onboarding(_ step: OnboardingStep, _ f: OnboardingFacts) -> [String] {
        switch step {
        case .welcome:
            return [
                "Track the moments of your life: log by hand, import in bulk,", "or let the places you go log for you.",
            ]
        case .auth:
            return ["Create your account, or sign in to an existing one."]
        case .createEventType:
            guard !f.typeNames.isEmpty else { return ["What do you want to track? Create your first event type."] }
            // Types already there (another device, an import) are offered, not asked for again.
            let more = f.typeNames.count > 3 ? " and \(f.typeNames.count - 3) more" : ""
            return ["You already track \(f.typeNames.prefix(3).joined(separator: ", "))\(more)."]
        case .logFirstEvent:
            guard f.eventCount == 0 else { return ["You have \(f.eventCount) event(s) already."] }
            let types = f.typeNames.isEmpty ? "" : " (your types: \(f.typeNames.prefix(3).joined(separator: ", ")))"
            return ["Log your first event\(types)."]
        case .permissions:
            return ["Trendy works best with a few permissions. Each is optional:"]
                + PermissionKind.allCases.map { "  \($0.rawValue): \(Self.words(f.permissions[$0] ?? .notRequested))" }
        case .finish:
            return [
                "You are all set\(f.email.map { ", \($0)" } ?? "").",
                "\(f.typeNames.count) type(s), \(f.eventCount) event(s) so far.",
            ]
        }
    }

    /// A step's title.
    static func stepTitle(_ step: OnboardingStep) -> String {
        switch step {
        case .welcome: "Welcome"
        case .auth: "Your account"
        case .createEventType: "Create a type"
        case .logFirstEvent: "Log your first event"
        case .permissions: "Permissions"
        case .finish: "Done"
        }
    }

    /// A permission's state in words ("not_requested" was on the screen).
    static func words(_ outcome: PermissionOutcome) -> String {
        switch outcome {
        case .granted: "allowed"
        case .denied: "not allowed"
        case .skipped: "skipped for now"
        case .notRequested: "not asked yet"
        }
    }
}
