import Foundation
import TrendyModels
import TrendySync

/// Reads events from CSV or JSON for bulk import, handing them over in chunks so memory stays
/// flat however long the file is (CSV streams; a JSON document is parsed whole). Malformed rows
/// are reported with their line (CSV) or item (JSON) number; the rest is imported.
///
/// CSV: a header row with `type,timestamp` and optionally `end_date,notes,all_day,external_id`;
/// any other column names a property of the row's type (its cell read by the definition).
/// JSON: an array of objects (or `{"events": [...]}`) with the same keys, and `properties`
/// (`{"shots": {"type": "number", "value": 2}}`, or bare values read by the definitions).
public enum EventImporter {
    /// One event read from the file, its type still a name.
    public struct Row: Sendable, Hashable {
        /// Line (CSV) or item (JSON) number, 1-based.
        public var line: Int
        /// The event type's name.
        public var typeName: String
        /// When it happened.
        public var timestamp: Date
        /// When it ended.
        public var endDate: Date?
        /// Notes.
        public var notes: String?
        /// All day.
        public var isAllDay: Bool
        /// The source's id for the row.
        public var externalId: String?
        /// Cells of the other columns (and bare JSON values), by column: read by the type's
        /// definitions when the type is known.
        public var propertyTexts: [String: String] = [:]
        /// Typed values (JSON `properties` in the wire shape).
        public var properties: [String: PropertyValue] = [:]
        /// Whether ``line`` is a CSV line or a JSON item.
        public var unit: RowError.Unit = .line
        /// The place's name (`location_name`).
        public var locationName: String?
        /// The place's position (`latitude` and `longitude`, both or neither).
        public var location: Coordinate?
        /// The zone it was logged in (`time_zone`).
        public var timeZone: String?
    }

    /// The columns every event has; any other names a property.
    public static let eventColumns: Set<String> = ["type", "timestamp", "end_date", "notes", "all_day", "external_id"]

    /// A row that could not be read.
    public struct RowError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
        /// What ``line`` counts.
        public enum Unit: String, Sendable, Hashable, Codable {
            /// A CSV file's physical line.
            case line
            /// A JSON array's item.
            case item
        }

        /// Line (CSV) or item (JSON) number, 1-based.
        public var line: Int
        /// Why.
        public var reason: String
        /// Whether ``line`` is a line or an item.
        public var unit: Unit

        /// Creates an error.
        public init(line: Int, reason: String, unit: Unit = .line) {
            self.line = line
            self.reason = reason
            self.unit = unit
        }

        /// `line 7: timestamp 'yesterday' is not an ISO-8601 date-time`, `item 2: ...`.
        public var description: String { "\(unit.rawValue) \(line): \(reason)" }

        enum CodingKeys: String, CodingKey { case line, item, reason }

        /// `{"line": 7, "reason": ...}` or `{"item": 2, "reason": ...}`.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(line, forKey: unit == .line ? .line : .item)
            try c.encode(reason, forKey: .reason)
        }

        /// Reads either shape.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            reason = try c.decode(String.self, forKey: .reason)
            if let item = try c.decodeIfPresent(Int.self, forKey: .item) {
                line = item
                unit = .item
            } else {
                line = try c.decode(Int.self, forKey: .line)
                unit = .line
            }
        }
    }

    /// Why the file as a whole cannot be read.
    public struct FileError: Error, CustomStringConvertible {
        /// A readable explanation.
        public var description: String
    }

    /// What reading a whole file found.
    public struct Summary: Sendable {
        /// Rows read, good and bad.
        public var rows = 0
        /// The first malformed rows (at most ``maximumErrorsKept``).
        public var errors: [RowError] = []
        /// How many rows were malformed in all.
        public var errorCount = 0

        mutating func add(_ e: RowError) {
            errorCount += 1
            if errors.count < EventImporter.maximumErrorsKept { errors.append(e) }
        }
    }

    /// Malformed rows reported in detail; the rest are only counted.
    public static let maximumErrorsKept = 1_000

    /// Reads `url` by its extension (`.csv` or `.json`), calling `chunk` with up to `chunkSize`
    /// good rows at a time, in file order.
    public static func read(
        _ url: URL, chunkSize: Int = 1_000, _ chunk: ([Row]) async throws -> Void
    ) async throws -> Summary {
        switch url.pathExtension.lowercased() {
        case "csv": return try await readCSV(url, chunkSize: chunkSize, chunk)
        case "json": return try await readJSON(url, chunkSize: chunkSize, chunk)
        default: throw FileError(description: "\(url.lastPathComponent): use a .csv or .json file")
        }
    }

    static func makeRow(line: Int, unit: RowError.Unit = .line, fields: [String: String]) -> Result<Row, RowError> {
        func failure(_ reason: String) -> Result<Row, RowError> {
            .failure(RowError(line: line, reason: reason, unit: unit))
        }
        func value(_ key: String) -> String? {
            guard let v = fields[key]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        guard let type = value("type") else { return failure("type is missing") }
        guard let stamp = value("timestamp") else {
            return failure("timestamp is missing")
        }
        guard let timestamp = TrendyJSON.parseDate(stamp) else {
            return failure("timestamp '\(stamp)' is not an ISO-8601 date-time")
        }
        var end: Date?
        if let e = value("end_date") {
            guard let d = TrendyJSON.parseDate(e) else {
                return failure("end_date '\(e)' is not an ISO-8601 date-time")
            }
            guard d >= timestamp else { return failure("end_date is before timestamp") }
            end = d
        }
        var allDay = false
        if let a = value("all_day")?.lowercased() {
            guard ["true", "false", "1", "0", "yes", "no"].contains(a) else {
                return failure("all_day '\(a)' is not true or false")
            }
            allDay = ["true", "1", "yes"].contains(a)
        }
        let notes = value("notes")
        let externalId = value("external_id")
        let locationName = value("location_name")
        let timeZone = value("time_zone")
        var location: Coordinate?
        switch (value("latitude"), value("longitude")) {
        case (nil, nil): break
        case (let lat?, let lon?):
            guard let latitude = Double(lat), let longitude = Double(lon) else {
                return failure("latitude and longitude must be numbers")
            }
            location = Coordinate(latitude: latitude, longitude: longitude)
        default: return failure("latitude and longitude go together")
        }
        // The models' own rules, as `trendy log` and the server apply them: a row they would
        // refuse is reported here with its line, never stored to be refused by every sync
        // (outside tester: notes with BEL/NUL/ESC imported, then failed on the server; a type
        // name with a control character aborted the whole file after creating other rows' types).
        do throws(ValidationError) {
            try EventType(id: probeId, name: type).validate()
        } catch {
            return failure("type name: " + error.issues.map(\.reason).joined(separator: "; "))
        }
        do throws(ValidationError) {
            try Event(
                id: probeId, eventTypeId: probeId, timestamp: timestamp, endDate: end, notes: notes,
                isAllDay: allDay, sourceType: .imported, externalId: externalId, location: location,
                locationName: locationName, timeZone: timeZone
            ).validate()
        } catch {
            return failure(error.issues.map(\.description).joined(separator: "; "))
        }
        var row = Row(
            line: line, typeName: type, timestamp: timestamp, endDate: end, notes: notes, isAllDay: allDay,
            externalId: externalId)
        row.unit = unit
        row.locationName = locationName
        row.location = location
        row.timeZone = timeZone
        for (column, text) in fields
        where !PropertyDefinition.reservedKeys.contains(column.lowercased())
            && !text.trimmingCharacters(in: .whitespaces).isEmpty
        {
            row.propertyTexts[column] = text
        }
        return .success(row)
    }

    /// An id for validating a row before it has one.
    static let probeId = UUIDv7Generator().next()

    static func readCSV(_ url: URL, chunkSize: Int, _ chunk: ([Row]) async throws -> Void) async throws -> Summary {
        guard let stream = InputStream(url: url) else { throw FileError(description: "cannot open \(url.path)") }
        var reader = CSVRecordReader(stream: stream)
        guard let first = try reader.next(), first.error == nil else {
            throw FileError(description: "\(url.lastPathComponent) is not a readable CSV file (no header row)")
        }
        let header = first.fields.map { $0.lowercased() }
        guard header.contains("type"), header.contains("timestamp") else {
            throw FileError(
                description: "\(url.lastPathComponent): the header row must name at least type and timestamp")
        }
        // A column named twice (in any case) would say two things of one event: which one counts?
        if let twice = header.first(where: { name in header.filter { $0 == name }.count > 1 }) {
            throw FileError(description: "\(url.lastPathComponent): the header row names \(twice) twice")
        }
        var rows: [Row] = []
        rows.reserveCapacity(chunkSize)
        var summary = Summary()
        while let record = try reader.next() {
            if record.error == nil, record.fields.allSatisfy({ $0.isEmpty }) { continue }
            summary.rows += 1
            if let error = record.error {
                summary.add(RowError(line: record.line, reason: error))
                continue
            }
            let fields = record.fields
            guard fields.count == header.count else {
                summary.add(
                    RowError(line: record.line, reason: "expected \(header.count) fields, found \(fields.count)"))
                continue
            }
            switch makeRow(line: record.line, fields: Dictionary(zip(header, fields), uniquingKeysWith: { a, _ in a }))
            {
            case .success(let r): rows.append(r)
            case .failure(let e): summary.add(e)
            }
            if rows.count >= chunkSize {
                try await chunk(rows)
                rows.removeAll(keepingCapacity: true)
            }
        }
        if !rows.isEmpty { try await chunk(rows) }
        return summary
    }

    static func readJSON(_ url: URL, chunkSize: Int, _ chunk: ([Row]) async throws -> Void) async throws -> Summary {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw FileError(description: "cannot read \(url.path)") }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw FileError(description: "\(url.lastPathComponent) is not valid JSON")
        }
        let items: [Any]
        if let array = parsed as? [Any] {
            items = array
        } else if let object = parsed as? [String: Any], let array = object["events"] as? [Any] {
            items = array
        } else {
            throw FileError(description: "\(url.lastPathComponent): expected an array of events or {\"events\": [...]}")
        }
        var rows: [Row] = []
        var summary = Summary()
        for (index, item) in items.enumerated() {
            summary.rows += 1
            if rows.count >= chunkSize {
                try await chunk(rows)
                rows.removeAll(keepingCapacity: true)
            }
            guard let object = item as? [String: Any] else {
                summary.add(RowError(line: index + 1, reason: "it is not an object", unit: .item))
                continue
            }
            var fields: [String: String] = [:]
            for (k, v) in object {
                switch v {
                case let s as String: fields[k] = s
                case let b as Bool: fields[k] = b ? "true" : "false"
                case let n as NSNumber: fields[k] = n.stringValue
                default: break
                }
            }
            switch makeRow(line: index + 1, unit: .item, fields: fields) {
            case .success(var r):
                switch properties(object["properties"]) {
                case .success(let (typed, texts)):
                    r.properties = typed
                    r.propertyTexts.merge(texts) { _, new in new }
                    rows.append(r)
                case .failure(let refusal): summary.add(RowError(line: index + 1, reason: refusal.reason, unit: .item))
                }
            case .failure(let e): summary.add(e)
            }
        }
        if !rows.isEmpty { try await chunk(rows) }
        return summary
    }
}

extension EventImporter {
    /// A JSON item's `properties`: wire-shaped values typed, bare ones as text for the
    /// definitions to read; a reason when it is not an object of those.
    static func properties(_ any: Any?) -> Result<([String: PropertyValue], [String: String]), RowError> {
        func failure(_ reason: String) -> Result<([String: PropertyValue], [String: String]), RowError> {
            .failure(RowError(line: 0, reason: reason, unit: .item))
        }
        guard let any, !(any is NSNull) else { return .success(([:], [:])) }
        guard let object = any as? [String: Any] else { return failure("properties is not an object") }
        var typed: [String: PropertyValue] = [:]
        var texts: [String: String] = [:]
        let decoder = TrendyJSON.decoder()
        for (key, value) in object {
            switch value {
            case let wire as [String: Any]:
                guard let data = try? JSONSerialization.data(withJSONObject: wire),
                    let decoded = try? decoder.decode(PropertyValue.self, from: data)
                else { return failure("properties.\(key) is not a value like {\"type\": \"number\", \"value\": 2}") }
                typed[key] = decoded
            case let s as String: texts[key] = s
            case let b as Bool: texts[key] = b ? "true" : "false"
            case let n as NSNumber: texts[key] = n.stringValue
            default: return failure("properties.\(key) is not a value")
            }
        }
        return .success((typed, texts))
    }
}
