import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

/// Field-level versions and conflicts (D37) in PostgreSQL; the rules are ``StoreRules``'.
extension PostgresServerStore {
    /// The fields of the entity other devices set after `base`, oldest first.
    static func changedFields(_ s: PostgresSession, entity: ChangeEntity, id: String, since base: ChangeBase)
        async throws -> [FieldVersion]
    {
        try await s.all(
            """
            SELECT field, device, changed_at, version FROM field_versions
            WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND version > \(base.version)
            AND device <> \(base.deviceId) ORDER BY version
            """, as: (String, String, Double, Int64).self
        ).map { FieldVersion(field: $0.0, device: $0.1, changedAt: $0.2, version: $0.3) }
    }

    /// The conflicts an incoming patch makes with changes its device had not seen.
    static func fieldConflicts(
        _ s: PostgresSession, entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        patch: [String: Any], base: ChangeBase?, now: Date
    ) async throws -> [KeptConflict] {
        guard let base else { return [] }
        return try StoreRules.fieldConflicts(
            await changedFields(s, entity: entity, id: id, since: base), entity: entity, id: id, current: current,
            patch: patch, base: base, now: now)
    }

    /// Records that the change at feed cursor `version` set `fields` of the entity.
    /// `replace` false keeps a version a real change already recorded.
    static func recordFieldVersions(
        _ s: PostgresSession, entity: ChangeEntity, id: String, version: Int64, fields: some Sequence<String>,
        base: ChangeBase?, now: Date, replace: Bool = true
    ) async throws {
        let fields = Array(fields)
        guard !fields.isEmpty else { return }
        if !replace {
            try await s.run(
                """
                INSERT INTO field_versions (entity_type, entity_id, field, version, device, changed_at)
                SELECT \(entity.rawValue), \(id), f, \(version), \(base?.deviceId ?? "unknown"), \(now.timeIntervalSince1970)
                FROM unnest(\(fields)::text[]) AS f
                ON CONFLICT (entity_type, entity_id, field) DO NOTHING
                """)
            return
        }
        try await s.run(
            """
            INSERT INTO field_versions (entity_type, entity_id, field, version, device, changed_at)
            SELECT \(entity.rawValue), \(id), f, \(version), \(base?.deviceId ?? "unknown"), \(now.timeIntervalSince1970)
            FROM unnest(\(fields)::text[]) AS f
            ON CONFLICT (entity_type, entity_id, field) DO UPDATE SET version = EXCLUDED.version,
            device = EXCLUDED.device, changed_at = EXCLUDED.changed_at
            """)
    }

    /// Keeps conflicts and announces them in the feed, each loss once (as the SQLite store does).
    static func record(_ conflicts: [KeptConflict], _ s: PostgresSession, userId: String, now: Date) async throws {
        for (conflict, lostVersion) in conflicts {
            let body = try StoreRules.encode(conflict)
            let inserted = try await s.run(
                """
                INSERT INTO conflicts (id, user_id, entity_id, field, lost_value, lost_by, lost_version, body)
                VALUES (\(conflict.id), \(userId), \(conflict.entityId), \(conflict.field ?? ""), \(conflict.lostValue),
                \(conflict.lostBy), \(lostVersion), \(body))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted > 0 else { continue }
            try await appendChange(
                s, userId: userId, entity: .conflict, id: conflict.id, operation: .create, data: body, now: now)
        }
    }

    /// Implements `ServerStore.conflicts`.
    public func conflicts(userId: String) async throws -> [String] {
        try await database.read { s in
            try await s.column(
                "SELECT body FROM conflicts WHERE user_id = \(userId) ORDER BY position", as: String.self)
        }
    }

    /// Before an entity is deleted: the conflict with edits its device had not seen, and its last
    /// content kept (see the SQLite store's `recordDeletion`).
    /// `cascade`: as the SQLite store's.
    static func recordDeletion(
        _ s: PostgresSession, userId: String, entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        body: String, base: ChangeBase?, now: Date, cascade: (createdAt: Double, unseen: Bool)? = nil
    ) async throws {
        if let base,
            let conflict = try StoreRules.deletionConflict(
                StoreRules.withUnseenCreate(
                    await changedFields(s, entity: entity, id: id, since: base), createdAt: cascade?.createdAt ?? 0,
                    unseen: cascade?.unseen ?? false, fields: current), entity: entity, id: id,
                current: current, body: body, base: base, now: now)
        {
            try await record([conflict], s, userId: userId, now: now)
        }
        try await s.run("DELETE FROM field_versions WHERE entity_type = \(entity.rawValue) AND entity_id = \(id)")
        try await s.run(
            """
            INSERT INTO deleted_entities (entity_type, entity_id, user_id, body, device, deleted_at)
            VALUES (\(entity.rawValue), \(id), \(userId), \(body), \(base?.deviceId ?? "unknown"),
            \(now.timeIntervalSince1970))
            ON CONFLICT (entity_type, entity_id) DO UPDATE SET user_id = EXCLUDED.user_id, body = EXCLUDED.body,
            device = EXCLUDED.device, deleted_at = EXCLUDED.deleted_at
            """)
    }

    /// The last content of an entity this user deleted, if it was.
    static func deletedBody(_ s: PostgresSession, userId: String, entity: ChangeEntity, id: String) async throws
        -> String?
    {
        try await s.value(
            """
            SELECT body FROM deleted_entities
            WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND user_id = \(userId)
            """, as: String.self)
    }

    /// An update of an entity that is not there: `gone` (the edit kept as a conflict) when it
    /// was deleted, else `notFound`.
    static func missing(
        _ s: PostgresSession, userId: String, entity: ChangeEntity, id: String, what: String, patch: [String: Any],
        base: ChangeBase?, now: Date, apply: (String) async throws -> String
    ) async throws -> StoreError {
        guard
            let (body, device, deletedAt) = try await s.one(
                """
                SELECT body, device, deleted_at FROM deleted_entities
                WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND user_id = \(userId)
                """, as: (String, String, Double).self)
        else { return .notFound(what) }
        let conflict = StoreRules.editOfDeletedConflict(
            entity: entity, id: id, patch: patch, base: base, deletedBy: device, deletedAt: deletedAt,
            entityAfterEdit: try await apply(body), now: now)
        try await record([conflict], s, userId: userId, now: now)
        return .gone(what)
    }
}
