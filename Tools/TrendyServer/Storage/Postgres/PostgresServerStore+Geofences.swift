import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    static func fetchGeofence(_ s: PostgresSession, userId: String, id: String) async throws
        -> Timestamped<Geofence>?
    {
        try await s.value("SELECT body FROM geofences WHERE id = \(id) AND user_id = \(userId)", as: String.self)
            .map { try StoreRules.decode(Timestamped<Geofence>.self, $0) }
    }

    public func listGeofences(userId: String, active: Bool?) async throws -> [Timestamped<Geofence>] {
        try await database.read { s in
            let bodies: [String]
            if let active {
                bodies = try await s.all(
                    "SELECT body FROM geofences WHERE user_id = \(userId) AND is_active = \(active) ORDER BY id",
                    as: String.self)
            } else {
                bodies = try await s.column(
                    "SELECT body FROM geofences WHERE user_id = \(userId) ORDER BY id", as: String.self)
            }
            return try bodies.map { try StoreRules.decode(Timestamped<Geofence>.self, $0) }
        }
    }

    public func createGeofence(userId: String, _ geofence: Geofence, now: Date) async throws -> (
        Timestamped<Geofence>, Bool
    ) {
        try await database.transaction(feedOf: userId) { s in
            let facts = try await Self.createFacts(
                s, userId: userId, entity: .geofence, table: "geofences", id: geofence.id.description,
                fetch: Self.fetchGeofence)
            let named = [geofence.entryEventTypeId, geofence.exitEventTypeId].compactMap { $0?.description }
            let plan = try StoreFlows.createGeofence(
                geofence, facts: facts, knownTypes: try await Self.knownTypes(s, userId: userId, named), now: now)
            try await Self.write(plan.writes, s, userId: userId, now: now)
            return plan.answer
        }
    }

    public func geofence(userId: String, id: String) async throws -> Timestamped<Geofence>? {
        try await database.read { s in try await Self.fetchGeofence(s, userId: userId, id: id) }
    }

    public func updateGeofence(userId: String, id: String, _ update: GeofenceUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Geofence>
    {
        try await edit(
            .geofence, id: id, what: "geofence", userId: userId, update, base: base, now: now,
            fetch: Self.fetchGeofence,
            refusal: { s, facts, edited in
                let known = try await Self.knownTypes(s, userId: userId, StoreFlows.typeQuestion(facts, edited: edited))
                return StoreFlows.refusal(facts, edited: edited, knownTypes: known)
            }, row: { geofence, body in .updateGeofence(id: id, isActive: geofence.isActive, body: body) })
    }

    public func deleteGeofence(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await delete(
            .geofence, id: id, what: "geofence", userId: userId, as: GeofenceUpdate.self, base: base, now: now,
            fetch: Self.fetchGeofence, row: .deleteGeofence(id: id))
    }
}
