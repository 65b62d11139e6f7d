import Foundation
import Synchronization
import TrendyGeofence

/// A ``RegionEventInbox`` in memory, with the file inbox's contract (``RegionEventInboxContract``):
/// oldest crossing first, one entry per crossing id, removal by id.
public final class InMemoryRegionEventInbox: RegionEventInbox {
    let crossings = Mutex<[RegionCrossing]>([])

    /// An empty inbox.
    public init() {}

    /// A crossing with an id already held replaces it.
    public func append(_ crossing: RegionCrossing) throws {
        crossings.withLock { all in
            all.removeAll { $0.id == crossing.id }
            all.append(crossing)
        }
    }

    /// Oldest first (ties in arrival order).
    public func pending() throws -> [RegionCrossing] {
        crossings.withLock { all in
            all.enumerated().sorted { ($0.element.occurredAt, $0.offset) < ($1.element.occurredAt, $1.offset) }
                .map(\.element)
        }
    }

    /// Unknown ids are ignored.
    public func remove(id: String) throws { crossings.withLock { $0.removeAll { $0.id == id } } }
}
