import Foundation
import TrendyAPI
import TrendyModels

/// A change-feed page in the server's own shape, read by the fast reader as the live client reads
/// it: each event as a change (`operation`, `create` by default) with its wire JSON, then each
/// delete; cursors count on from `cursor`.
public func serverFeedPage(
    _ events: [Event], deletes: [UUIDv7] = [], from cursor: Int64 = 0, operation: String = "create",
    at time: Date = Date(timeIntervalSince1970: 1_800_000_000.5)
) -> ChangesPage? {
    var items: [String] = []
    var next = cursor
    for event in events {
        next += 1
        items.append(
            #"{"cursor":\#(next),"entity_type":"event","entity_id":"\#(event.id)","operation":"\#(operation)","#
                + #""created_at":"\#(ISO8601.format(time))","data":\#(event.wireJSON(createdAt: time, updatedAt: time))}"#
        )
    }
    for id in deletes {
        next += 1
        items.append(
            #"{"cursor":\#(next),"entity_type":"event","entity_id":"\#(id)","operation":"delete","#
                + #""created_at":"\#(ISO8601.format(time))","data":null}"#)
    }
    let text = #"{"changes":[\#(items.joined(separator: ","))],"next_cursor":\#(next),"has_more":false}"#
    return ChangesPage.fastRead(Data(text.utf8))
}
