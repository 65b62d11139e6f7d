import Foundation
import TrendyModels

extension ChangesPage {
    /// Reads a page without `JSONDecoder` when every change is an event or event-type change or
    /// a delete (the common case); nil otherwise, and the caller decodes normally. An event's
    /// data is also kept as the text received (``Change/dataJSON``), so a store need not encode
    /// it again.
    public static func fastRead(_ data: Data) -> ChangesPage? {
        data.withUnsafeBytes { raw -> ChangesPage? in
            var s = WireJSONScanner(raw.bindMemory(to: UInt8.self))
            guard s.consume(UInt8(ascii: "{")) else { return nil }
            var changes: [Change]?
            var next: Int64?
            var hasMore: Bool?
            var at: String?
            var first = true
            while let key = s.nextKey(&first) {
                if s.equals(key, "changes") {
                    changes = s.array(readChange)
                } else if s.equals(key, "next_cursor") {
                    next = s.integer()
                } else if s.equals(key, "has_more") {
                    hasMore = s.bool()
                } else if s.equals(key, "next_cursor_at") {
                    at = s.string()
                } else {
                    _ = s.skipValue()
                }
                if s.failed { return nil }
            }
            guard !s.failed, s.atEnd(), let changes, let next, let hasMore else { return nil }
            return ChangesPage(changes: changes, nextCursor: next, hasMore: hasMore, nextCursorAt: at)
        }
    }

    static func readChange(_ s: inout WireJSONScanner) -> Change? {
        guard s.consume(UInt8(ascii: "{")) else { return nil }
        var cursor: Int64?
        var entity: ChangeEntity?
        var entityId: String?
        var operation: ChangeOperation?
        var createdAt: Date?
        var payload: ChangeData?
        var payloadText: String?
        var dataStart: Int?
        var first = true
        while let key = s.nextKey(&first) {
            if s.equals(key, "cursor") {
                cursor = s.integer()
            } else if s.equals(key, "entity_type") {
                entity = s.string().flatMap(ChangeEntity.init(rawValue:))
            } else if s.equals(key, "entity_id") {
                entityId = s.string()
            } else if s.equals(key, "operation") {
                operation = s.string().flatMap(ChangeOperation.init(rawValue:))
            } else if s.equals(key, "created_at") {
                createdAt = s.date()
            } else if s.equals(key, "data") {
                if !s.null() {
                    s.skipSpace()
                    if let entity {
                        guard let read = readData(&s, entity) else { return s.fail() }
                        (payload, payloadText) = read
                    } else {
                        // entity_type comes later (the server writes it first; others may not).
                        dataStart = s.index
                        guard s.skipValue() else { return nil }
                    }
                }
            } else {
                _ = s.skipValue()
            }
            if s.failed { return nil }
        }
        guard !s.failed, let cursor, let entity, let entityId, let operation, let createdAt else { return s.fail() }
        if let dataStart {
            var again = s
            again.index = dataStart
            guard let read = readData(&again, entity) else { return s.fail() }
            (payload, payloadText) = read
        }
        return Change(
            cursor: cursor, entityType: entity, entityId: entityId, operation: operation, data: payload,
            createdAt: createdAt, dataJSON: payloadText)
    }

    /// Reads a change's data object of the given kind, with its text for events.
    static func readData(_ s: inout WireJSONScanner, _ entity: ChangeEntity) -> (ChangeData, String?)? {
        let start = s.index
        switch entity {
        case .event:
            guard let event = Event.scan(&s)?.timestamped else { return s.fail() }
            let text = String(decoding: UnsafeBufferPointer(rebasing: s.bytes[start..<s.index]), as: UTF8.self)
            return (.event(event), text)
        case .eventType:
            guard let type = readEventType(&s) else { return s.fail() }
            return (.eventType(type), nil)
        case .geofence, .propertyDefinition, .onboarding, .conflict:
            return s.fail()
        }
    }

    static func readEventType(_ s: inout WireJSONScanner) -> Timestamped<EventType>? {
        guard s.consume(UInt8(ascii: "{")) else { return nil }
        var id: UUIDv7?
        var name: String?
        var color: String?
        var icon: String?
        var createdAt: Date?
        var updatedAt: Date?
        var first = true
        while let key = s.nextKey(&first) {
            if s.equals(key, "id") {
                id = s.uuidv7()
            } else if s.equals(key, "name") {
                name = s.string()
            } else if s.equals(key, "color") {
                color = s.string()
            } else if s.equals(key, "icon") {
                icon = s.string()
            } else if s.equals(key, "created_at") {
                createdAt = s.date()
            } else if s.equals(key, "updated_at") {
                updatedAt = s.date()
            } else {
                _ = s.skipValue()
            }
            if s.failed { return nil }
        }
        guard !s.failed, let id, let name, let color, let icon, let createdAt, let updatedAt else { return s.fail() }
        return Timestamped(
            EventType(id: id, name: name, color: color, icon: icon), createdAt: createdAt, updatedAt: updatedAt)
    }
}

extension ListPage where Item == Timestamped<Event> {
    /// Reads a page of events without `JSONDecoder` (bootstrap downloads), keeping each item's
    /// text (``itemsJSON``); nil when any item needs the full decoder.
    public static func fastRead(_ data: Data) -> ListPage<Timestamped<Event>>? {
        data.withUnsafeBytes { raw -> ListPage<Timestamped<Event>>? in
            var s = WireJSONScanner(raw.bindMemory(to: UInt8.self))
            guard s.consume(UInt8(ascii: "{")) else { return nil }
            var events: [Timestamped<Event>]?
            var texts: [String] = []
            var limit: Int64?
            var offset: Int64?
            var hasMore: Bool?
            var next: String?
            var first = true
            while let key = s.nextKey(&first) {
                if s.equals(key, "items") {
                    texts.removeAll()
                    events = s.array { s in
                        s.skipSpace()
                        let start = s.index
                        guard let event = Event.scan(&s)?.timestamped else { return nil }
                        texts.append(
                            String(decoding: UnsafeBufferPointer(rebasing: s.bytes[start..<s.index]), as: UTF8.self))
                        return event
                    }
                } else if s.equals(key, "limit") {
                    limit = s.integer()
                } else if s.equals(key, "offset") {
                    offset = s.integer()
                } else if s.equals(key, "has_more") {
                    hasMore = s.bool()
                } else if s.equals(key, "next") {
                    guard let value = s.optionalString() else { return nil }
                    next = value
                } else {
                    _ = s.skipValue()
                }
                if s.failed { return nil }
            }
            guard !s.failed, s.atEnd(), let events, let limit, let offset, let hasMore,
                let limit = Int(exactly: limit), let offset = Int(exactly: offset)
            else { return nil }
            return ListPage(
                items: events, limit: limit, offset: offset, hasMore: hasMore, next: next, itemsJSON: texts)
        }
    }
}

extension Event.Scanned {
    /// The event with the server's timestamps, which stored entities always carry.
    var timestamped: Timestamped<Event>? {
        guard let createdAt, let updatedAt else { return nil }
        return Timestamped(event, createdAt: createdAt, updatedAt: updatedAt)
    }
}
