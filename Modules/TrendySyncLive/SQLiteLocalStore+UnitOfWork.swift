import Foundation
import GRDB
import TrendyModels
import TrendySync

/// ``LocalTransaction`` over one GRDB transaction of the install database.
struct SQLiteLocalTransaction: LocalTransaction {
    let db: Database
    /// The zone a new event without one is stamped with.
    var zone: String? = nil

    static func databaseValue(_ value: LocalValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        }
    }

    static func localValue(_ value: DatabaseValue) -> LocalValue {
        switch value.storage {
        case .null: .null
        case .int64(let i): .integer(i)
        case .double(let d): .real(d)
        case .string(let s): .text(s)
        case .blob(let data): .text(String(decoding: data, as: UTF8.self))
        }
    }

    func execute(_ sql: String, _ arguments: [LocalValue]) throws {
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments.map(Self.databaseValue)))
    }

    func rows(_ sql: String, _ arguments: [LocalValue]) throws -> [[String: LocalValue]] {
        try Row.fetchAll(
            db.cachedStatement(sql: sql), arguments: StatementArguments(arguments.map(Self.databaseValue))
        ).map { row in
            var out: [String: LocalValue] = [:]
            for (column, value) in row { out[column] = Self.localValue(value) }
            return out
        }
    }

    var lastInsertedRowID: Int64 { db.lastInsertedRowID }

    func geofence(_ id: UUIDv7) throws -> Geofence? { try SQLiteLocalStore.storedGeofence(db, id: id) }
    func event(_ id: UUIDv7) throws -> Event? { try SQLiteLocalStore.storedEvent(db, id: id) }
    func eventTypeExists(_ id: UUIDv7) throws -> Bool { try SQLiteLocalStore.eventTypeExists(db, id: id) }
    func insertEvent(_ event: Event, now: Date) throws {
        var event = event
        if event.timeZone == nil, let zone, Event.isZoneName(zone) { event.timeZone = zone }
        try SQLiteLocalStore.insertEvent(db, event, now: now)
    }
    func replaceEvent(_ event: Event, now: Date) throws { try SQLiteLocalStore.replaceEvent(db, event, now: now) }
}

extension SQLiteLocalStore: LocalUnitOfWork {
    public func write<T: Sendable>(_ body: @Sendable (any LocalTransaction) throws -> T) async throws -> T {
        let zone = zone()
        return try await db.write { db in try body(SQLiteLocalTransaction(db: db, zone: zone)) }
    }

    public func read<T: Sendable>(_ body: @Sendable (any LocalTransaction) throws -> T) async throws -> T {
        try await db.read { db in try body(SQLiteLocalTransaction(db: db)) }
    }
}
