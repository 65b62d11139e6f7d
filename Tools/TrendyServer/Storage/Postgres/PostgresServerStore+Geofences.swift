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

    static func checkTypes(_ s: PostgresSession, userId: String, _ g: Geofence) async throws {
        let named = [g.entryEventTypeId, g.exitEventTypeId].compactMap { $0?.description }
        guard !named.isEmpty else { return }
        let known = try await s.column(
            "SELECT id FROM event_types WHERE user_id = \(userId) AND id = ANY(\(named)::text[])", as: String.self)
        let issues = StoreRules.typeIssues(g, known: Set(known))
        if !issues.isEmpty { throw StoreError.validation(issues) }
    }

    /// Implements `ServerStore.listGeofences`.
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

    /// Implements `ServerStore.createGeofence`.
    public func createGeofence(userId: String, _ geofence: Geofence, now: Date) async throws -> (
        Timestamped<Geofence>, Bool
    ) {
        try await database.transaction(feedOf: userId) { s in
            let id = geofence.id.description
            if let owner = try await s.value("SELECT user_id FROM geofences WHERE id = \(id)", as: String.self) {
                guard owner == userId, let stored = try await Self.fetchGeofence(s, userId: userId, id: id) else {
                    throw StoreError.conflict("the id \(id) is already in use")
                }
                return (stored, false)
            }
            if let body = try await Self.deletedBody(s, userId: userId, entity: .geofence, id: id) {
                return (try StoreRules.decode(Timestamped<Geofence>.self, body), false)
            }
            try await Self.checkTypes(s, userId: userId, geofence)
            let stored = Timestamped(geofence, createdAt: now, updatedAt: now)
            let body = try StoreRules.encode(stored)
            let seconds = now.timeIntervalSince1970
            let inserted = try await s.run(
                """
                INSERT INTO geofences (id, user_id, is_active, body, created_at, updated_at)
                VALUES (\(id), \(userId), \(geofence.isActive), \(body), \(seconds), \(seconds))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted == 1 else { throw StoreError.conflict("the id \(id) is already in use") }
            try await Self.appendChange(
                s, userId: userId, entity: .geofence, id: id, operation: .create, data: body, now: now)
            return (stored, true)
        }
    }

    /// Implements `ServerStore.geofence`.
    public func geofence(userId: String, id: String) async throws -> Timestamped<Geofence>? {
        try await database.read { s in try await Self.fetchGeofence(s, userId: userId, id: id) }
    }

    /// Implements `ServerStore.updateGeofence`.
    public func updateGeofence(userId: String, id: String, _ update: GeofenceUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Geofence>
    {
        let outcome: Result<Timestamped<Geofence>, StoreError> = try await database.transaction(feedOf: userId) { s in
            let patch = try FieldPatch.object(update)
            guard let stored = try await Self.fetchGeofence(s, userId: userId, id: id) else {
                return .failure(
                    try await Self.missing(
                        s, userId: userId, entity: .geofence, id: id, what: "geofence", patch: patch, base: base,
                        now: now
                    ) { body in try StoreRules.edit(body, with: update) })
            }
            let conflicts = try await Self.fieldConflicts(
                s, entity: .geofence, id: id,
                current: { try StoreRules.fields(of: stored.value, as: GeofenceUpdate.self) }, patch: patch,
                base: base, now: now)
            let updated = try StoreRules.valid(update.apply(to: stored.value))
            try await Self.checkTypes(s, userId: userId, updated)
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let body = try StoreRules.encode(result)
            try await s.run(
                """
                UPDATE geofences SET is_active = \(updated.isActive), body = \(body),
                updated_at = \(now.timeIntervalSince1970) WHERE id = \(id)
                """)
            let version = try await Self.appendChange(
                s, userId: userId, entity: .geofence, id: id, operation: .update, data: body, now: now)
            try await Self.recordFieldVersions(
                s, entity: .geofence, id: id, version: version, fields: patch.keys, base: base, now: now)
            try await Self.record(conflicts, s, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteGeofence`.
    public func deleteGeofence(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await database.transaction(feedOf: userId) { s in
            guard let stored = try await Self.fetchGeofence(s, userId: userId, id: id) else {
                throw StoreError.notFound("geofence")
            }
            try await Self.recordDeletion(
                s, userId: userId, entity: .geofence, id: id,
                current: { try StoreRules.fields(of: stored.value, as: GeofenceUpdate.self) },
                body: try StoreRules.encode(stored), base: base, now: now)
            try await s.run("DELETE FROM geofences WHERE id = \(id) AND user_id = \(userId)")
            try await Self.appendChange(
                s, userId: userId, entity: .geofence, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
