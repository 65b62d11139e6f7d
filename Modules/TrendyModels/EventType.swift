/// A kind of event a person logs ("Coffee", "Workout"), with its colour and icon.
public struct EventType: Hashable, Sendable, Codable, Identifiable, Validating {
    /// Client-generated id.
    public var id: UUIDv7
    /// Display name, unique per user; 1–100 characters.
    public var name: String
    /// Colour as `#RRGGBB`.
    public var color: String
    /// Icon name (an SF Symbol name on iOS), 1–64 characters.
    public var icon: String

    /// Creates an event type.
    public init(id: UUIDv7, name: String, color: String = "#3B82F6", icon: String = "circle") {
        self.id = id
        self.name = name
        self.color = color
        self.icon = icon
    }

    /// Whether `text` is a `#RRGGBB` colour.
    public static func isHexColor(_ text: String) -> Bool {
        let u = Array(text.utf8)
        return u.count == 7 && u[0] == UInt8(ascii: "#")
            && u.dropFirst().allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }

    /// Checks every field and reports all problems at once.
    public func validate() throws(ValidationError) {
        var c = IssueCollector("EventType")
        c.check(!name.isBlank, "name", "must not be empty")
        c.check(name.count <= 100, "name", "must be at most 100 characters")
        c.check(!name.hasControlCharacter, "name", "must not contain control characters")
        c.check(Self.isHexColor(color), "color", "must be a colour like #3B82F6")
        c.check(!icon.isBlank && icon.count <= 64, "icon", "must be 1 to 64 characters")
        c.check(!icon.hasControlCharacter, "icon", "must not contain control characters")
        try c.finish()
    }
}
