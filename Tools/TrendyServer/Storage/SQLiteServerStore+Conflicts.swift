import Foundation
import GRDB
import TrendyAPI
import TrendyModels

/// Field-level versions and conflicts (D37). Every update records, per field it changes, the
/// feed position of the change and the device that made it; a change that says what it was
/// based on (``ChangeBase``) is compared with them: a field changed after that base by another
/// device, to a different value, is a concurrent change. The later change to reach the server
/// wins and the value it replaces is kept as a ``SyncConflict`` in the feed. A delete wins over
/// edits its device had not seen, and an edit of a deleted entity is kept the same way.
extension SQLiteServerStore {
    /// The conflicts an incoming patch makes with changes its device had not seen.
    static func fieldConflicts(
        _ db: Database, entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        patch: [String: Any], base: ChangeBase?, now: Date
    ) throws -> [(SyncConflict, lostVersion: Int64)] {
        guard let base else { return [] }
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT field, device, changed_at, version FROM field_versions
                    WHERE entity_type = ? AND entity_id = ? AND version > ? AND device != ?
                    """), arguments: [entity.rawValue, id, base.version, base.deviceId])
        guard !rows.isEmpty else { return [] }
        let current = try current()
        return rows.compactMap { row -> (SyncConflict, lostVersion: Int64)? in
            let field: String = row["field"]
            guard let incoming = patch[field] else { return nil }
            let kept = FieldPatch.canonical(incoming)
            let lost = FieldPatch.canonical(current[field])
            guard kept != lost else { return nil }
            let conflict = SyncConflict(
                id: UUID().uuidString.lowercased(), kind: .field, entityType: entity, entityId: id, field: field,
                keptValue: kept, lostValue: lost, keptBy: base.deviceId, keptAt: now, lostBy: row["device"],
                lostAt: Date(timeIntervalSince1970: row["changed_at"]), detectedAt: now)
            return (conflict, row["version"])
        }
    }

    /// Records that the change at feed cursor `version` set `fields` of the entity.
    static func recordFieldVersions(
        _ db: Database, entity: ChangeEntity, id: String, version: Int64, fields: some Sequence<String>,
        base: ChangeBase?, now: Date
    ) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO field_versions (entity_type, entity_id, field, version, device, changed_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        for field in fields {
            try statement.execute(arguments: [
                entity.rawValue, id, field, version, base?.deviceId ?? "unknown", now.timeIntervalSince1970,
            ])
        }
    }

    /// Keeps conflicts and announces them in the feed, each once: the same loss (entity, field,
    /// lost value from the same device, replaced at the same version) is recorded only once, so
    /// a retried request records nothing new, while the same value losing again later (after a
    /// restore, say) is a new conflict.
    static func record(
        _ conflicts: [(SyncConflict, lostVersion: Int64)], _ db: Database, userId: String, now: Date
    ) throws {
        for (conflict, lostVersion) in conflicts {
            let body = try encode(conflict)
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO conflicts
                    (id, user_id, entity_id, field, lost_value, lost_by, lost_version, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    conflict.id, userId, conflict.entityId, conflict.field ?? "", conflict.lostValue, conflict.lostBy,
                    lostVersion, body,
                ])
            guard db.changesCount > 0 else { continue }
            try appendChange(
                db, userId: userId, entity: .conflict, id: conflict.id, operation: .create, data: body, now: now)
        }
    }

    /// Implements `ServerStore.conflicts`.
    public func conflicts(userId: String) async throws -> [String] {
        try await db.read { db in
            try String.fetchAll(
                db, sql: "SELECT body FROM conflicts WHERE user_id = ? AND body IS NOT NULL ORDER BY rowid",
                arguments: [userId])
        }
    }

    /// Before an entity is deleted: a conflict for the edits its deleting device had not seen,
    /// and the entity's last content kept (so an edit arriving later is kept too, and either can
    /// be restored). `current` is the entity as a patch of every field; `body` its JSON.
    static func recordDeletion(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        body: String, base: ChangeBase?, now: Date
    ) throws {
        if let base {
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT field, device, changed_at, version FROM field_versions
                        WHERE entity_type = ? AND entity_id = ? AND version > ? AND device != ? ORDER BY version
                        """), arguments: [entity.rawValue, id, base.version, base.deviceId])
            if let last = rows.last {
                let current = try current()
                var lost: [String: Any] = [:]
                for row in rows { lost[row["field"] as String] = current[row["field"] as String] ?? NSNull() }
                try record(
                    [
                        (
                            SyncConflict(
                                id: UUID().uuidString.lowercased(), kind: .deleted, entityType: entity, entityId: id,
                                field: nil, keptValue: nil, lostValue: FieldPatch.text(lost), keptBy: base.deviceId,
                                keptAt: now, lostBy: last["device"],
                                lostAt: Date(timeIntervalSince1970: last["changed_at"]),
                                detectedAt: now, entity: body),
                            last["version"] as Int64
                        )
                    ], db, userId: userId, now: now)
            }
        }
        try db.execute(
            sql: "DELETE FROM field_versions WHERE entity_type = ? AND entity_id = ?", arguments: [entity.rawValue, id])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO deleted_entities (entity_type, entity_id, user_id, body, device, deleted_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [entity.rawValue, id, userId, body, base?.deviceId ?? "unknown", now.timeIntervalSince1970])
    }

    /// The last content of an entity this user deleted, if it was. A create of a deleted id is
    /// a retry of a create the server already took (its answer was lost, then another device
    /// deleted the entity): it answers "already there", never brings the entity back.
    static func deletedBody(_ db: Database, userId: String, entity: ChangeEntity, id: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(
                sql: "SELECT body FROM deleted_entities WHERE entity_type = ? AND entity_id = ? AND user_id = ?"),
            arguments: [entity.rawValue, id, userId])
    }

    /// An update of an entity that is not there: when it was deleted, the edit is kept as a
    /// conflict and the answer is `gone`; otherwise `notFound`. `apply` lays the patch over the
    /// entity's last content (JSON in, JSON out).
    static func missing(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, what: String, patch: [String: Any],
        base: ChangeBase?, now: Date, apply: (String) throws -> String
    ) throws -> StoreError {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT body, device, deleted_at FROM deleted_entities
                    WHERE entity_type = ? AND entity_id = ? AND user_id = ?
                    """, arguments: [entity.rawValue, id, userId])
        else { return .notFound(what) }
        // The edit's base tells a retry (same base: recorded once) from a later edit of the same values.
        try record(
            [
                (
                    SyncConflict(
                        id: UUID().uuidString.lowercased(), kind: .deleted, entityType: entity, entityId: id,
                        field: nil, keptValue: nil, lostValue: FieldPatch.text(patch), keptBy: row["device"],
                        keptAt: Date(timeIntervalSince1970: row["deleted_at"]), lostBy: base?.deviceId ?? "unknown",
                        lostAt: now, detectedAt: now, entity: try apply(row["body"])),
                    base?.version ?? 0
                )
            ], db, userId: userId, now: now)
        return .gone(what)
    }
}
