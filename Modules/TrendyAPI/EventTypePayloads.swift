import TrendyModels

/// `POST /event-types`: the id is optional (the server makes one when absent).
public struct EventTypeCreate: Codable, Sendable, Hashable {
    /// Client-generated id, or nil.
    public var id: UUIDv7?
    /// Name, unique per user.
    public var name: String
    /// `#RRGGBB`; default `#3B82F6`.
    public var color: String?
    /// Icon name; default `circle`.
    public var icon: String?

    /// Creates a payload.
    public init(id: UUIDv7? = nil, name: String, color: String? = nil, icon: String? = nil) {
        self.id = id
        self.name = name
        self.color = color
        self.icon = icon
    }
}

/// `PATCH /event-types/{id}`: absent fields keep their value.
public struct EventTypeUpdate: Codable, Sendable, Hashable {
    /// New name.
    public var name: String?
    /// New colour.
    public var color: String?
    /// New icon.
    public var icon: String?

    /// Creates a payload.
    public init(name: String? = nil, color: String? = nil, icon: String? = nil) {
        self.name = name
        self.color = color
        self.icon = icon
    }

    /// Applies the update.
    public func apply(to type: EventType) -> EventType {
        var t = type
        if let name { t.name = name }
        if let color { t.color = color }
        if let icon { t.icon = icon }
        return t
    }
}
