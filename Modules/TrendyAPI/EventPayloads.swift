import Foundation
import TrendyModels

/// `PATCH /events/{id}`: absent fields keep their value, `null` clears a nullable field.
public struct EventUpdate: Codable, Sendable, Equatable {
    /// New type.
    public var eventTypeId: FieldUpdate<UUIDv7> = .keep
    /// New time.
    public var timestamp: FieldUpdate<Date> = .keep
    /// New end (nullable).
    public var endDate: FieldUpdate<Date> = .keep
    /// New notes (nullable).
    public var notes: FieldUpdate<String> = .keep
    /// New all-day flag.
    public var isAllDay: FieldUpdate<Bool> = .keep
    /// New external id (nullable).
    public var externalId: FieldUpdate<String> = .keep
    /// New geofence (nullable).
    public var geofenceId: FieldUpdate<UUIDv7> = .keep
    /// New location (nullable).
    public var location: FieldUpdate<Coordinate> = .keep
    /// New place name (nullable).
    public var locationName: FieldUpdate<String> = .keep
    /// New properties (replaces all; `null` clears).
    public var properties: FieldUpdate<[String: PropertyValue]> = .keep
    /// New zone it was logged in (nullable).
    public var timeZone: FieldUpdate<String> = .keep

    /// Creates an empty update (changes nothing).
    public init() {}

    enum CodingKeys: String, CodingKey {
        case eventTypeId = "event_type_id"
        case timestamp
        case endDate = "end_date"
        case notes
        case isAllDay = "is_all_day"
        case externalId = "external_id"
        case geofenceId = "geofence_id"
        case location
        case locationName = "location_name"
        case properties
        case timeZone = "time_zone"
    }

    /// Decodes the tri-state fields.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        eventTypeId = try c.decodeUpdate(UUIDv7.self, forKey: .eventTypeId)
        timestamp = try c.decodeUpdate(Date.self, forKey: .timestamp)
        endDate = try c.decodeUpdate(Date.self, forKey: .endDate)
        notes = try c.decodeUpdate(String.self, forKey: .notes)
        isAllDay = try c.decodeUpdate(Bool.self, forKey: .isAllDay)
        externalId = try c.decodeUpdate(String.self, forKey: .externalId)
        geofenceId = try c.decodeUpdate(UUIDv7.self, forKey: .geofenceId)
        location = try c.decodeUpdate(Coordinate.self, forKey: .location)
        locationName = try c.decodeUpdate(String.self, forKey: .locationName)
        properties = try c.decodeUpdate([String: PropertyValue].self, forKey: .properties)
        timeZone = try c.decodeUpdate(String.self, forKey: .timeZone)
    }

    /// Encodes present fields only, with explicit `null` for cleared ones.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeUpdate(eventTypeId, forKey: .eventTypeId)
        try c.encodeUpdate(timestamp, forKey: .timestamp)
        try c.encodeUpdate(endDate, forKey: .endDate)
        try c.encodeUpdate(notes, forKey: .notes)
        try c.encodeUpdate(isAllDay, forKey: .isAllDay)
        try c.encodeUpdate(externalId, forKey: .externalId)
        try c.encodeUpdate(geofenceId, forKey: .geofenceId)
        try c.encodeUpdate(location, forKey: .location)
        try c.encodeUpdate(locationName, forKey: .locationName)
        try c.encodeUpdate(properties, forKey: .properties)
        try c.encodeUpdate(timeZone, forKey: .timeZone)
    }

    /// Fields that may not be cleared (`null` is an error for them).
    public var clearedRequiredFields: [String] {
        var out: [String] = []
        if eventTypeId == .clear { out.append("event_type_id") }
        if timestamp == .clear { out.append("timestamp") }
        if isAllDay == .clear { out.append("is_all_day") }
        return out
    }

    /// Applies the update to an event.
    public func apply(to event: Event) -> Event {
        var e = event
        if let v = eventTypeId.value { e.eventTypeId = v }
        if let v = timestamp.value { e.timestamp = v }
        e.endDate = endDate.apply(to: e.endDate)
        e.notes = notes.apply(to: e.notes)
        if let v = isAllDay.value { e.isAllDay = v }
        e.externalId = externalId.apply(to: e.externalId)
        e.geofenceId = geofenceId.apply(to: e.geofenceId)
        e.location = location.apply(to: e.location)
        e.locationName = locationName.apply(to: e.locationName)
        e.properties = properties.apply(to: e.properties) ?? [:]
        e.timeZone = timeZone.apply(to: e.timeZone)
        return e
    }
}

/// `POST /events/batch`: up to 500 events.
public struct EventBatchRequest: Codable, Sendable, Equatable {
    /// The events to create.
    public var events: [Event]
    /// Creates a batch.
    public init(events: [Event]) { self.events = events }
}

/// What happened to one item of a batch.
public struct EventBatchItemResult: Codable, Sendable, Equatable {
    /// Outcome of one item.
    public enum Status: String, Codable, Sendable {
        /// Stored now.
        case created
        /// Already stored (same id, or a duplicate by the de-duplication key); `id` is the stored event's.
        case existing
        /// The id was deleted on the server: nothing was created (a resend never brings a deleted
        /// event back). A create queued after the delete (an archive imported again after it)
        /// goes again under a new id.
        case deleted
        /// Rejected; see `error`.
        case failed
    }

    /// Position in the request.
    public var index: Int
    /// The id sent, or for `existing` the stored event's id.
    public var id: String?
    /// The outcome.
    public var status: Status
    /// Why it failed.
    public var error: APIProblem?
    /// For `deleted`: the account's change-feed cursor when the id was deleted (see
    /// ``APIProblem/deletedVersion``).
    public var deletedVersion: Int64?

    /// Creates a result.
    public init(index: Int, id: String?, status: Status, error: APIProblem? = nil, deletedVersion: Int64? = nil) {
        self.index = index
        self.id = id
        self.status = status
        self.error = error
        self.deletedVersion = deletedVersion
    }

    enum CodingKeys: String, CodingKey {
        case index, id, status, error
        case deletedVersion = "deleted_version"
    }
}

/// The answer to a batch: 201 when nothing failed, 207 when some did, 400 when all did.
public struct EventBatchResponse: Codable, Sendable, Equatable {
    /// One result per item, in request order.
    public var results: [EventBatchItemResult]
    /// How many were stored now.
    public var created: Int
    /// How many were already stored.
    public var existing: Int
    /// How many ids were deleted on the server (nothing created).
    public var deleted: Int
    /// How many were rejected.
    public var failed: Int

    /// Creates a response.
    public init(results: [EventBatchItemResult]) {
        self.results = results
        created = results.filter { $0.status == .created }.count
        existing = results.filter { $0.status == .existing }.count
        deleted = results.filter { $0.status == .deleted }.count
        failed = results.filter { $0.status == .failed }.count
    }

    enum CodingKeys: String, CodingKey { case results, created, existing, deleted, failed }

    /// Reads a response; the counts follow from the results (a server from before `deleted` sends
    /// no such count).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(results: try container.decode([EventBatchItemResult].self, forKey: .results))
    }
}

/// A page of a list.
public struct ListPage<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The items.
    public var items: [Item]
    /// Page size asked for.
    public var limit: Int
    /// Items skipped.
    public var offset: Int
    /// Whether more items follow.
    public var hasMore: Bool
    /// Where the next page starts (pass it as `after`); present when more items follow.
    public var next: String?
    /// Each item's JSON exactly as received, when the reader kept it (``fastRead(_:)`` does for
    /// events), so a store need not encode the items again. It says the same as `items`, so it
    /// takes no part in equality or coding.
    public var itemsJSON: [String]? = nil

    /// Creates a page.
    public init(
        items: [Item], limit: Int, offset: Int, hasMore: Bool, next: String? = nil, itemsJSON: [String]? = nil
    ) {
        self.items = items
        self.limit = limit
        self.offset = offset
        self.hasMore = hasMore
        self.next = next
        self.itemsJSON = itemsJSON
    }

    enum CodingKeys: String, CodingKey {
        case items, limit, offset, next
        case hasMore = "has_more"
    }

    /// Equal when everything but ``itemsJSON`` is.
    public static func == (lhs: ListPage, rhs: ListPage) -> Bool {
        lhs.items == rhs.items && lhs.limit == rhs.limit && lhs.offset == rhs.offset && lhs.hasMore == rhs.hasMore
            && lhs.next == rhs.next
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(items)
        hasher.combine(limit)
        hasher.combine(offset)
        hasher.combine(hasMore)
        hasher.combine(next)
    }
}

extension EventBatchResponse {
    /// The response as JSON, written directly (500 results through `JSONEncoder` cost as much as
    /// storing the events). Failed items' problems go through `JSONEncoder`; they are rare.
    public func wireJSON() -> Data {
        var out =
            "{\"created\":\(created),\"deleted\":\(deleted),\"existing\":\(existing),\"failed\":\(failed),\"results\":["
        out.reserveCapacity(results.count * 90 + 64)
        for (n, r) in results.enumerated() {
            if n > 0 { out += "," }
            out += "{"
            if let error = r.error, let data = try? TrendyJSON.encoder().encode(error) {
                out += "\"error\":" + String(decoding: data, as: UTF8.self) + ","
            }
            if let id = r.id {
                // Ids are UUID text (hex and dashes): nothing to escape.
                out += "\"id\":\"\(id)\","
            }
            if let version = r.deletedVersion { out += "\"deleted_version\":\(version)," }
            out += "\"index\":\(r.index),\"status\":\"\(r.status.rawValue)\"}"
        }
        out += "]}"
        return Data(out.utf8)
    }

    /// Reads a response without `JSONDecoder` when no item failed; nil otherwise.
    public static func fastRead(_ data: Data) -> EventBatchResponse? {
        guard let root = WireJSONReader.parse(data), let items = root["results"]?.array else { return nil }
        var results: [EventBatchItemResult] = []
        results.reserveCapacity(items.count)
        for item in items {
            guard let index = item["index"]?.integer, let statusText = item["status"]?.string,
                let status = EventBatchItemResult.Status(rawValue: statusText), status != .failed
            else { return nil }
            results.append(
                EventBatchItemResult(
                    index: Int(index), id: item["id"]?.string, status: status,
                    deletedVersion: item["deleted_version"]?.integer))
        }
        return EventBatchResponse(results: results)
    }
}
