import Foundation
import TrendyModels

/// A value of a local SQL row, for a feature's own tables (``LocalTransaction``).
public enum LocalValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// An integer (booleans are 0 and 1).
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// Text.
    case text(String)

    /// Text, or `NULL` for nil.
    public init(_ text: String?) { self = text.map(LocalValue.text) ?? .null }
    /// An integer, or `NULL` for nil.
    public init(_ integer: Int64?) { self = integer.map(LocalValue.integer) ?? .null }
    /// 1 or 0.
    public init(_ bool: Bool) { self = .integer(bool ? 1 : 0) }

    /// The text, if this is text.
    public var text: String? { if case .text(let s) = self { s } else { nil } }
    /// The integer, if this is one (a whole real number counts).
    public var integer: Int64? {
        switch self {
        case .integer(let i): i
        case .real(let d) where d.rounded() == d: Int64(exactly: d)
        default: nil
        }
    }
    /// A boolean stored as an integer.
    public var bool: Bool? { integer.map { $0 != 0 } }
}

/// One transaction over the install's local database, shared by Sync's entities and a feature's
/// own tables: what the feature writes, the events it creates or changes and their outbox
/// entries commit together or not at all. Use it only inside ``LocalUnitOfWork``'s closures.
public protocol LocalTransaction {
    /// Runs a statement on the caller's own tables.
    func execute(_ sql: String, _ arguments: [LocalValue]) throws
    /// The rows of a query on the caller's own tables, as column name → value.
    func rows(_ sql: String, _ arguments: [LocalValue]) throws -> [[String: LocalValue]]
    /// The row id the last insert of this transaction was given.
    var lastInsertedRowID: Int64 { get }

    /// A geofence as stored here, if there is one.
    func geofence(_ id: UUIDv7) throws -> Geofence?
    /// An event as stored here, if there is one.
    func event(_ id: UUIDv7) throws -> Event?
    /// Whether an event type exists here.
    func eventTypeExists(_ id: UUIDv7) throws -> Bool
    /// Adds an event and queues it for sync (its type must exist; the event must be valid).
    func insertEvent(_ event: Event, now: Date) throws
    /// Changes a stored event and queues the fields that changed for sync.
    func replaceEvent(_ event: Event, now: Date) throws
}

/// The local database as a unit of work: a feature records its own rows and Sync's entities in
/// one transaction (Geofence: a crossing, its visit state, the event it makes and that event's
/// outbox entry) without depending on how the store is built.
public protocol LocalUnitOfWork: Sendable {
    /// Runs `body` in one write transaction (serialised with every other writer, across
    /// processes); an error rolls everything back.
    func write<T: Sendable>(_ body: @Sendable (any LocalTransaction) throws -> T) async throws -> T
    /// Runs `body` in one read transaction (a consistent snapshot; writing throws).
    func read<T: Sendable>(_ body: @Sendable (any LocalTransaction) throws -> T) async throws -> T
}
