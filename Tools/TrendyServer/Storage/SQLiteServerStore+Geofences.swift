import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    static func fetchGeofence(_ db: Database, userId: String, id: String) throws -> Timestamped<Geofence>? {
        guard
            let body = try String.fetchOne(
                db, sql: "SELECT body FROM geofences WHERE id = ? AND user_id = ?", arguments: [id, userId])
        else { return nil }
        return try StoreRules.decode(Timestamped<Geofence>.self, body)
    }

    static func checkTypes(_ db: Database, userId: String, _ g: Geofence) throws {
        let known = try [g.entryEventTypeId, g.exitEventTypeId].compactMap { $0?.description }.filter {
            try fetchEventType(db, userId: userId, id: $0) != nil
        }
        let issues = StoreRules.typeIssues(g, known: Set(known))
        if !issues.isEmpty { throw StoreError.validation(issues) }
    }

    /// Implements `ServerStore.listGeofences`.
    public func listGeofences(userId: String, active: Bool?) async throws -> [Timestamped<Geofence>] {
        try await db.read { db in
            let bodies: [String]
            if let active {
                bodies = try String.fetchAll(
                    db, sql: "SELECT body FROM geofences WHERE user_id = ? AND is_active = ? ORDER BY id",
                    arguments: [userId, active])
            } else {
                bodies = try String.fetchAll(
                    db, sql: "SELECT body FROM geofences WHERE user_id = ? ORDER BY id", arguments: [userId])
            }
            return try bodies.map { try StoreRules.decode(Timestamped<Geofence>.self, $0) }
        }
    }

    /// Implements `ServerStore.createGeofence`.
    public func createGeofence(userId: String, _ geofence: Geofence, now: Date) async throws -> (
        Timestamped<Geofence>, Bool
    ) {
        try await db.write { db in
            let id = geofence.id.description
            if let owner = try String.fetchOne(db, sql: "SELECT user_id FROM geofences WHERE id = ?", arguments: [id]) {
                guard owner == userId, let stored = try Self.fetchGeofence(db, userId: userId, id: id) else {
                    throw StoreError.conflict("the id \(id) is already in use")
                }
                return (stored, false)
            }
            if let body = try Self.deletedBody(db, userId: userId, entity: .geofence, id: id) {
                return (try StoreRules.decode(Timestamped<Geofence>.self, body), false)
            }
            try Self.checkTypes(db, userId: userId, geofence)
            let stored = Timestamped(geofence, createdAt: now, updatedAt: now)
            let body = try StoreRules.encode(stored)
            try db.execute(
                sql: """
                    INSERT INTO geofences (id, user_id, is_active, body, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, userId, geofence.isActive, body, now.timeIntervalSince1970, now.timeIntervalSince1970,
                ])
            try Self.appendChange(
                db, userId: userId, entity: .geofence, id: id, operation: .create, data: body, now: now)
            return (stored, true)
        }
    }

    /// Implements `ServerStore.geofence`.
    public func geofence(userId: String, id: String) async throws -> Timestamped<Geofence>? {
        try await db.read { db in try Self.fetchGeofence(db, userId: userId, id: id) }
    }

    /// Implements `ServerStore.updateGeofence`.
    public func updateGeofence(userId: String, id: String, _ update: GeofenceUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Geofence>
    {
        let outcome: Result<Timestamped<Geofence>, StoreError> = try await db.write { db in
            let patch = try FieldPatch.object(update)
            guard let stored = try Self.fetchGeofence(db, userId: userId, id: id) else {
                return .failure(
                    try Self.missing(
                        db, userId: userId, entity: .geofence, id: id, what: "geofence", patch: patch, base: base,
                        now: now
                    ) { body in try StoreRules.edit(body, with: update) })
            }
            let conflicts = try Self.fieldConflicts(
                db, entity: .geofence, id: id,
                current: { try StoreRules.fields(of: stored.value, as: GeofenceUpdate.self) }, patch: patch,
                base: base,
                now: now)
            let updated = try StoreRules.valid(update.apply(to: stored.value))
            try Self.checkTypes(db, userId: userId, updated)
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let body = try StoreRules.encode(result)
            try db.execute(
                sql: "UPDATE geofences SET is_active = ?, body = ?, updated_at = ? WHERE id = ?",
                arguments: [updated.isActive, body, now.timeIntervalSince1970, id])
            let version = try Self.appendChange(
                db, userId: userId, entity: .geofence, id: id, operation: .update, data: body, now: now)
            try Self.recordFieldVersions(
                db, entity: .geofence, id: id, version: version, fields: patch.keys, base: base, now: now)
            try Self.record(conflicts, db, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteGeofence`.
    public func deleteGeofence(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await db.write { db in
            if let stored = try Self.fetchGeofence(db, userId: userId, id: id) {
                try Self.recordDeletion(
                    db, userId: userId, entity: .geofence, id: id,
                    current: { try StoreRules.fields(of: stored.value, as: GeofenceUpdate.self) },
                    body: try StoreRules.encode(stored), base: base, now: now)
            }
            try db.execute(sql: "DELETE FROM geofences WHERE id = ? AND user_id = ?", arguments: [id, userId])
            guard db.changesCount > 0 else { throw StoreError.notFound("geofence") }
            try Self.appendChange(
                db, userId: userId, entity: .geofence, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
