import TrendyAPI

/// What the feed knows of one entity for echo suppression (D57): the cursor of its last change
/// that every device receives (`shared`), the one device whose own changes since then it leaves
/// out of that device's feed (`device`; nil when there are none), and the last of those (`own`).
struct EchoState: Equatable, Sendable {
    var shared: Int64
    var device: String?
    var own: Int64?
}

/// Echo suppression (D57): a device's pull leaves out the changes it made itself, and only those
/// it provably holds already.
///
/// A device holds its own change `x` exactly as the server stored it when nothing else reached
/// the entity between what the device had seen when it made the change (its base) and `x`: the
/// server applied the device's patch to the state the device had, as the device did. Anything
/// else in that window — another device's change, a cascade, a merge, or an own change that was
/// itself sent back — is applied by the device's pull before `x`, so `x` must follow it to put
/// the device's values back. The rule is decided when `x` is written, from ``EchoState``, and
/// stored with the change: the feed then only compares a column.
///
/// - The device must also have pulled past its own last left-out change of the entity (`own` at
///   or before the base): a change of its that arrives later than a newer one of its — a retry of
///   a failed edit, a request held up on the way — was not made on top of that newer one, so the
///   server's result is not what the device shows, and it comes back.
/// - A change without a known device (no `Trendy-Device-Id`, or `unknown`) is sent to everyone.
/// - The first change of an entity the state has never seen is left out only when it is a
///   create: an entity from before echo suppression may have any history.
enum EchoRule {
    /// The entities whose changes can be left out of their device's feed.
    static let tracked: Set<ChangeEntity> = [.event, .eventType, .geofence, .propertyDefinition]

    /// The device a change's base names, when it names one.
    static func device(of owner: ChangeBase?) -> String? { device(named: owner?.deviceId) }

    /// A device a change can be left out for: not `unknown` (what a client without an id sends).
    static func device(named name: String?) -> String? {
        guard let name, name != "unknown", !name.isEmpty else { return nil }
        return name
    }

    /// Whether `operation` by `owner` on an entity in `state` is left out of `owner`'s feed.
    static func skips(_ state: EchoState?, owner: ChangeBase?, operation: ChangeOperation) -> Bool {
        guard let device = device(of: owner), let owner else { return false }
        guard let state else { return operation == .create }
        guard state.shared <= owner.version else { return false }
        guard let previous = state.device else { return true }
        return previous == device && (state.own ?? 0) <= owner.version
    }

    /// The state after a change at `cursor` by `owner` that was (`skipped`) or was not left out.
    static func after(_ state: EchoState?, owner: ChangeBase?, skipped: Bool, cursor: Int64) -> EchoState {
        guard skipped, let device = device(of: owner) else { return EchoState(shared: cursor, device: nil, own: nil) }
        return EchoState(shared: state?.shared ?? 0, device: device, own: cursor)
    }
}
