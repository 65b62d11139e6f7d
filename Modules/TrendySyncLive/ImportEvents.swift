import Foundation
import TrendyModels
import TrendySync

/// Importing a file into the local store, as one use case: rows are read chunk by chunk (memory
/// stays flat for any file size, D24), unknown types are created (get-or-create, so another
/// process creating the same type at once is not an error), rows become imported events, and
/// events already imported (same type, time and external id) are counted as duplicates.
public struct ImportEvents: Sendable {
    /// What an import did.
    public struct Report: Sendable, Equatable {
        /// Rows read, good and bad.
        public var rows = 0
        /// Events added.
        public var imported = 0
        /// Rows that were already imported.
        public var duplicates = 0
        /// The types created for the file, in the order they were created.
        public var createdTypes: [String] = []
        /// The first malformed rows.
        public var errors: [EventImporter.RowError] = []
        /// How many rows were malformed in all.
        public var errorCount = 0
        /// Columns (or JSON keys) that name no property of a row's type, as "Type: column"
        /// once each: their values were kept as text.
        public var unknownColumns: [String] = []
    }

    let store: any LocalStore
    let ids: UUIDv7Generator

    /// An import into `store`, with ids from `ids`.
    public init(store: any LocalStore, ids: UUIDv7Generator) {
        self.store = store
        self.ids = ids
    }

    /// Imports `url` (.csv or .json); `progress` hears the rows read so far after each chunk.
    /// Throws ``EventImporter/FileError`` for a file it cannot read, and the store's errors.
    public func run(_ url: URL, chunkSize: Int = 1_000, progress: (Int) -> Void = { _ in }) async throws -> Report {
        var types: [String: EventType] = [:]
        for t in try await store.eventTypes() { types[t.value.name.lowercased()] = t.value }
        var report = Report()
        var read = 0
        var definitions: [UUIDv7: [PropertyDefinition]] = [:]
        var rowErrors: [EventImporter.RowError] = []
        let summary = try await EventImporter.read(url, chunkSize: chunkSize) { rows in
            for name in Set(rows.map(\.typeName)).sorted() where types[name.lowercased()] == nil {
                let (type, made) = try await store.findOrCreateEventType(EventType(id: ids.next(), name: name))
                types[name.lowercased()] = type
                if made { report.createdTypes.append(name) }
            }
            var events: [Event] = []
            for row in rows {
                guard let type = types[row.typeName.lowercased()] else { continue }
                var event = Event(
                    id: ids.next(), eventTypeId: type.id, timestamp: row.timestamp, endDate: row.endDate,
                    notes: row.notes, isAllDay: row.isAllDay, sourceType: .imported, externalId: row.externalId,
                    location: row.location, locationName: row.locationName, timeZone: row.timeZone)
                if !row.propertyTexts.isEmpty || !row.properties.isEmpty {
                    if definitions[type.id] == nil {
                        definitions[type.id] = try await store.propertyDefinitions(ofType: type.id).map(\.value)
                    }
                    switch Self.properties(of: row, type: type, definitions: definitions[type.id] ?? []) {
                    case .success(let (values, unknown)):
                        event.properties = values
                        for column in unknown where !report.unknownColumns.contains(column) {
                            report.unknownColumns.append(column)
                        }
                    case .failure(let error):
                        // The event is here already (an export imported back): nothing would be
                        // written, so nothing is refused — its values are the stored event's.
                        let here = EventFilter(
                            typeId: type.id, since: row.timestamp, until: row.timestamp.addingTimeInterval(0.001))
                        if try await !store.eventPage(offset: 0, limit: 1, filter: here).isEmpty {
                            report.duplicates += 1
                        } else {
                            rowErrors.append(error)
                        }
                        continue
                    }
                }
                events.append(event)
            }
            let inserted = try await store.insertEvents(events)
            report.imported += inserted.inserted
            report.duplicates += inserted.duplicates
            read += rows.count
            progress(read)
        }
        report.rows = summary.rows
        report.errors = (summary.errors + rowErrors).sorted { $0.line < $1.line }
            .prefix(EventImporter.maximumErrorsKept).map { $0 }
        report.errorCount = summary.errorCount + rowErrors.count
        return report
    }

    /// A row's values: each cell read by its column's definition (any case), typed values
    /// checked against theirs; a column no definition has is kept as text and named
    /// ("Coffee: sugar"). A value that does not fit is the row's error, with its line.
    static func properties(of row: EventImporter.Row, type: EventType, definitions: [PropertyDefinition])
        -> Result<([String: PropertyValue], [String]), EventImporter.RowError>
    {
        let unit = row.unit
        func failure(_ issues: [FieldIssue]) -> Result<([String: PropertyValue], [String]), EventImporter.RowError> {
            .failure(
                EventImporter.RowError(
                    line: row.line, reason: issues.map(\.description).joined(separator: "; "), unit: unit))
        }
        let byKey = Dictionary(definitions.map { ($0.key.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        var values: [String: PropertyValue] = [:]
        var unknown: [String] = []
        for (key, value) in row.properties {
            if let definition = byKey[key.lowercased()] {
                let issues = definition.issues(for: value, field: "properties.\(key)")
                if !issues.isEmpty { return failure(issues) }
                values[definition.key] = value
            } else {
                values[key] = value
            }
        }
        for (column, text) in row.propertyTexts.sorted(by: { $0.key < $1.key }) {
            if let definition = byKey[column.lowercased()] {
                do throws(ValidationError) {
                    values[definition.key] = try definition.parse(text)
                } catch {
                    return failure(error.issues)
                }
            } else {
                values[column] = .text(text)
                unknown.append("\(type.name): \(column)")
            }
        }
        do throws(ValidationError) {
            try Event(id: EventImporter.probeId, eventTypeId: type.id, timestamp: row.timestamp, properties: values)
                .validate()
        } catch {
            return failure(error.issues)
        }
        return .success((values, unknown))
    }
}
