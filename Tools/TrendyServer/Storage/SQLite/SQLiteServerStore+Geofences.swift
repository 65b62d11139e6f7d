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

    public func createGeofence(userId: String, _ geofence: Geofence, now: Date) async throws -> (
        Timestamped<Geofence>, Bool
    ) {
        try await db.write { db in
            let facts = try Self.createFacts(
                db, userId: userId, entity: .geofence, table: "geofences", id: geofence.id.description,
                fetch: Self.fetchGeofence)
            let named = [geofence.entryEventTypeId, geofence.exitEventTypeId].compactMap { $0?.description }
            let plan = try StoreFlows.createGeofence(
                geofence, facts: facts, knownTypes: try Self.knownTypes(db, userId: userId, named), now: now)
            try Self.write(plan.writes, db, userId: userId, now: now)
            return plan.answer
        }
    }

    public func geofence(userId: String, id: String) async throws -> Timestamped<Geofence>? {
        try await db.read { db in try Self.fetchGeofence(db, userId: userId, id: id) }
    }

    public func updateGeofence(userId: String, id: String, _ update: GeofenceUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Geofence>
    {
        try await edit(
            .geofence, id: id, what: "geofence", userId: userId, update, base: base, now: now,
            fetch: Self.fetchGeofence,
            refusal: { db, facts, edited in
                let known = try Self.knownTypes(db, userId: userId, StoreFlows.typeQuestion(facts, edited: edited))
                return StoreFlows.refusal(facts, edited: edited, knownTypes: known)
            }, row: { geofence, body in .updateGeofence(id: id, isActive: geofence.isActive, body: body) })
    }

    public func deleteGeofence(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await delete(
            .geofence, id: id, what: "geofence", userId: userId, as: GeofenceUpdate.self, base: base, now: now,
            fetch: Self.fetchGeofence, row: .deleteGeofence(id: id))
    }
}
