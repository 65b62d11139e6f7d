import TrendyModels

/// Two-step permission priming: explain why first, then show the system prompt only to people
/// who chose to continue.
public enum PermissionPriming {
    /// The explanation shown before the system prompt.
    public static func explanation(for kind: PermissionKind) -> String {
        switch kind {
        case .notifications:
            "Trendy can remind you to log and tell you when a sync needs you. You can change this any time."
        case .location:
            "Trendy can log arrivals and departures at places you choose (geofences). "
                + "That needs location access \"always\", used only for your places."
        case .health:
            "Trendy can import workouts and sleep from your health data, so you do not log them twice."
        }
    }

    /// Primes, then asks: `skipped` when the person chose "not now", else the system's answer.
    public static func ask(_ kind: PermissionKind, using prompter: any PermissionPrompter) async -> PermissionOutcome {
        guard await prompter.prime(kind, explanation: explanation(for: kind)) else { return .skipped }
        return await prompter.requestSystemPermission(kind) ? .granted : .denied
    }
}
