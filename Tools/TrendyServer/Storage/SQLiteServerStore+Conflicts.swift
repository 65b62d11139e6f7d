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
    ) throws -> [KeptConflict] {
        guard let base else { return [] }
        return try StoreRules.fieldConflicts(
            changedFields(db, entity: entity, id: id, since: base), entity: entity, id: id, current: current,
            patch: patch, base: base, now: now)
    }

    /// The fields of the entity other devices set after `base`, oldest first.
    static func changedFields(_ db: Database, entity: ChangeEntity, id: String, since base: ChangeBase) throws
        -> [FieldVersion]
    {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT field, device, changed_at, version FROM field_versions
                    WHERE entity_type = ? AND entity_id = ? AND version > ? AND device != ? ORDER BY version
                    """), arguments: [entity.rawValue, id, base.version, base.deviceId]
        ).map { FieldVersion(field: $0[0], device: $0[1], changedAt: $0[2], version: $0[3]) }
    }

    /// Records that the change at feed cursor `version` set `fields` of the entity.
    /// `replace` false keeps a version a real change already recorded.
    static func recordFieldVersions(
        _ db: Database, entity: ChangeEntity, id: String, version: Int64, fields: some Sequence<String>,
        base: ChangeBase?, now: Date, replace: Bool = true
    ) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR \(replace ? "REPLACE" : "IGNORE") INTO field_versions (entity_type, entity_id, field, version, device, changed_at)
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
        _ conflicts: [KeptConflict], _ db: Database, userId: String, now: Date
    ) throws {
        for (conflict, lostVersion) in conflicts {
            let body = try StoreRules.encode(conflict)
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
    /// `cascade`: the entity goes with its deleted type — its create time and whether its create
    /// came after the deleting device's base (see ``StoreRules/withUnseenCreate(_:createdAt:unseen:fields:)``).
    static func recordDeletion(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        body: String, base: ChangeBase?, now: Date, cascade: (createdAt: Double, unseen: Bool)? = nil
    ) throws {
        if let base,
            let conflict = try StoreRules.deletionConflict(
                StoreRules.withUnseenCreate(
                    changedFields(db, entity: entity, id: id, since: base), createdAt: cascade?.createdAt ?? 0,
                    unseen: cascade?.unseen ?? false, fields: current), entity: entity, id: id, current: current,
                body: body, base: base, now: now)
        {
            try record([conflict], db, userId: userId, now: now)
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
        let conflict = StoreRules.editOfDeletedConflict(
            entity: entity, id: id, patch: patch, base: base, deletedBy: row["device"], deletedAt: row["deleted_at"],
            entityAfterEdit: try apply(row["body"]), now: now)
        try record([conflict], db, userId: userId, now: now)
        return .gone(what)
    }
}
