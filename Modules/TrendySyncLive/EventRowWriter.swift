import Foundation
import GRDB
import GRDBSQLite
import TrendyModels

/// Writes server events into `local_events` through SQLite's C API: one prepared statement per
/// page, text bound in place. Applying a pulled page is the hottest write of all, and GRDB's
/// general argument handling (boxing each value, copying each string) was most of the Swift
/// side's cost there. Used only inside a write transaction; everything else goes through GRDB.
final class EventRowWriter {
    private let db: Database
    private let statement: OpaquePointer
    /// The last event type's id as text (a page's events share a few types).
    private var lastType: (id: UUIDv7, text: String)?

    init(_ db: Database) throws {
        self.db = db
        let sql = """
            INSERT OR REPLACE INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)
            VALUES (?1, ?2, ?3, ?4, ?5, 'synced')
            """
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db.sqliteConnection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: sql)
        }
        self.statement = statement
    }

    deinit { sqlite3_finalize(statement) }

    /// Inserts or replaces one synced event row (`id` is the event's id as text). A replace, not an
    /// upsert: the insights plugin's triggers take a replaced row's part out before the insert.
    func write(id: String, _ event: Event, body: String) throws {
        let typeText: String
        if let lastType, lastType.id == event.eventTypeId {
            typeText = lastType.text
        } else {
            typeText = event.eventTypeId.description
            lastType = (event.eventTypeId, typeText)
        }
        var id = id
        var type = typeText
        var source = event.sourceType.rawValue
        var body = body
        let code = id.withUTF8 { id in
            type.withUTF8 { type in
                source.withUTF8 { source in
                    body.withUTF8 { body in
                        bindText(1, id)
                        bindText(2, type)
                        sqlite3_bind_int64(statement, 3, SQLiteLocalStore.milliseconds(event.timestamp))
                        bindText(4, source)
                        bindText(5, body)
                        let code = sqlite3_step(statement)
                        sqlite3_reset(statement)
                        return code
                    }
                }
            }
        }
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
        }
    }

    /// Binds text that stays valid until the statement has stepped (SQLITE_STATIC: no copy).
    private func bindText(_ index: Int32, _ text: UnsafeBufferPointer<UInt8>) {
        text.withMemoryRebound(to: CChar.self) { chars in
            if let address = chars.baseAddress {
                _ = sqlite3_bind_text(statement, index, address, Int32(chars.count), nil)
            } else {
                // An empty buffer may have no address; empty text is still text, not NULL.
                _ = sqlite3_bind_text(statement, index, "", 0, nil)
            }
        }
    }
}
