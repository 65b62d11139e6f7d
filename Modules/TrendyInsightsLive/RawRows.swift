import GRDB
import GRDBSQLite

/// Reads a prepared statement's rows through SQLite's C API: integers and text without GRDB's
/// per-value conversions (the aggregates are tens of thousands of small rows).
enum RawRows {
    /// One row, valid only inside the closure it is given to.
    struct Current {
        let statement: OpaquePointer

        /// Column `i` as an integer.
        func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(statement, i)) }

        /// Whether column `i` is empty text (or NULL).
        func isEmpty(_ i: Int32) -> Bool { sqlite3_column_bytes(statement, i) == 0 }

        /// Column `i` as text.
        func text(_ i: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, i) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, i))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
    }

    /// Runs `statement` with `arguments` and calls `body` for each row.
    static func each(_ statement: Statement, _ arguments: StatementArguments, _ body: (Current) throws -> Void) throws {
        try statement.setArguments(arguments)
        let raw = statement.sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "reading insight aggregates")
            }
            try body(Current(statement: raw))
        }
    }
}
