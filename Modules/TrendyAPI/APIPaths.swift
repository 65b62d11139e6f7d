import TrendyModels

/// The paths of the Trendy API v1 and the auth API, shared by the server and the client.
public enum APIPaths {
    /// Prefix of the Trendy API.
    public static let api = "/api/v1"
    /// Prefix of the GoTrue-compatible auth API.
    public static let auth = "/auth/v1"

    /// `/api/v1/health`.
    public static let health = "\(api)/health"
    /// `/api/v1/ready`: readiness, including the database.
    public static let ready = "\(api)/ready"
    /// `/metrics`: Prometheus' text format.
    public static let metrics = "/metrics"
    /// `/api/v1/event-types`.
    public static let eventTypes = "\(api)/event-types"
    /// `/api/v1/events`.
    public static let events = "\(api)/events"
    /// `/api/v1/events/batch`.
    public static let eventsBatch = "\(api)/events/batch"
    /// `/api/v1/geofences`.
    public static let geofences = "\(api)/geofences"
    /// `/api/v1/property-definitions`.
    public static let propertyDefinitions = "\(api)/property-definitions"
    /// `/api/v1/event-types/{id}/properties`.
    public static func properties(ofType id: UUIDv7) -> String { "\(eventTypes)/\(id)/properties" }
    /// `/api/v1/users/onboarding`.
    public static let onboarding = "\(api)/users/onboarding"
    /// `/api/v1/events/edits`: field-level patches and deletes of events, many at once.
    public static let eventEdits = "\(api)/events/edits"
    /// `/api/v1/changes`.
    public static let changes = "\(api)/changes"
    /// `/api/v1/changes/latest-cursor`.
    public static let latestCursor = "\(api)/changes/latest-cursor"
    /// `/api/v1/conflicts`.
    public static let conflicts = "\(api)/conflicts"
    /// `/api/v1/me/sync`.
    public static let syncSummary = "\(api)/me/sync"

    /// The largest batch `POST /events/batch` and `POST /events/edits` accept.
    public static let maxBatchSize = 500
    /// The largest page `GET /changes` returns (the feed is how devices download everything:
    /// pages of 1,000 pulled 15–20 % faster than pages of 500, D30).
    public static let maxChangesLimit = 1000
    /// The largest page `GET /events` returns.
    public static let maxEventsLimit = 500
    /// The header carrying an idempotency key.
    public static let idempotencyKeyHeader = "Idempotency-Key"
    /// The header a replayed response carries (`true`).
    public static let idempotentReplayHeader = "Idempotent-Replayed"
    /// The header of a successful write's answer naming the user's newest feed change after it
    /// (a cursor), and the header with that change's time: the device keeps them to check later
    /// that the server still has what it pushed (D60).
    public static let writeCursorHeader = "Trendy-Cursor"
    /// See ``writeCursorHeader``.
    public static let writeCursorAtHeader = "Trendy-Cursor-At"
    /// The header carrying the change-feed cursor a change was made on (``ChangeBase``).
    public static let baseVersionHeader = "Trendy-Base-Version"
    /// The header carrying the id of the device that made a change (``ChangeBase``).
    public static let deviceIdHeader = "Trendy-Device-Id"
    /// `GET /changes`' query parameter: the `next_cursor_at` of the page that gave `since`; the
    /// server answers `409 cursor_ahead` when its change at `since` was written at another time
    /// (it lost changes and numbered new ones the same, D59).
    public static let sinceAtQuery = "since_at"
    /// The `GET /changes` parameter naming the pulling device: the changes it made and holds
    /// already are left out (echo suppression, D57); `next_cursor` still passes them.
    public static let omitDeviceQuery = "omit_device"
    /// The request id header.
    public static let requestIdHeader = "X-Request-ID"
}
