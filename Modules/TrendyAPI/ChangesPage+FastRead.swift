import Foundation
import TrendyModels

extension ChangesPage {
    /// Reads a page without `JSONDecoder` when every change is an event or event-type change or
    /// a delete (the common case); nil otherwise, and the caller decodes normally.
    public static func fastRead(_ data: Data) -> ChangesPage? {
        guard let root = WireJSONReader.parse(data), let items = root["changes"]?.array,
            let next = root["next_cursor"]?.integer, let hasMore = root["has_more"]?.bool
        else { return nil }
        var changes: [Change] = []
        changes.reserveCapacity(items.count)
        for item in items {
            guard let cursor = item["cursor"]?.integer, let entityText = item["entity_type"]?.string,
                let entity = ChangeEntity(rawValue: entityText), let entityId = item["entity_id"]?.string,
                let operationText = item["operation"]?.string, let operation = ChangeOperation(rawValue: operationText),
                let createdText = item["created_at"]?.string, let createdAt = ISO8601.parse(createdText)
            else { return nil }
            var data: ChangeData?
            if let payload = item["data"], !payload.isNull {
                guard let created = payload["created_at"]?.string.flatMap(ISO8601.parse),
                    let updated = payload["updated_at"]?.string.flatMap(ISO8601.parse)
                else { return nil }
                switch entity {
                case .event:
                    guard let event = Event(wire: payload) else { return nil }
                    data = .event(Timestamped(event, createdAt: created, updatedAt: updated))
                case .eventType:
                    guard let id = payload["id"]?.string.flatMap(UUIDv7.init), let name = payload["name"]?.string,
                        let color = payload["color"]?.string, let icon = payload["icon"]?.string
                    else { return nil }
                    data = .eventType(
                        Timestamped(
                            EventType(id: id, name: name, color: color, icon: icon), createdAt: created,
                            updatedAt: updated))
                case .geofence, .onboarding:
                    return nil
                }
            }
            changes.append(
                Change(
                    cursor: cursor, entityType: entity, entityId: entityId, operation: operation, data: data,
                    createdAt: createdAt))
        }
        return ChangesPage(changes: changes, nextCursor: next, hasMore: hasMore)
    }
}

extension ListPage where Item == Timestamped<Event> {
    /// Reads a page of events without `JSONDecoder` (bootstrap downloads); nil when any item
    /// needs the full decoder.
    public static func fastRead(_ data: Data) -> ListPage<Timestamped<Event>>? {
        guard let root = WireJSONReader.parse(data), let items = root["items"]?.array,
            let limit = root["limit"]?.integer, let offset = root["offset"]?.integer,
            let hasMore = root["has_more"]?.bool
        else { return nil }
        var events: [Timestamped<Event>] = []
        events.reserveCapacity(items.count)
        for item in items {
            guard let event = Event(wire: item), let created = item["created_at"]?.string.flatMap(ISO8601.parse),
                let updated = item["updated_at"]?.string.flatMap(ISO8601.parse)
            else { return nil }
            events.append(Timestamped(event, createdAt: created, updatedAt: updated))
        }
        return ListPage(items: events, limit: Int(limit), offset: Int(offset), hasMore: hasMore)
    }
}
