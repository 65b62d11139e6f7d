import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TrendyAPI
import TrendyModels

/// `GET /events/export` as Trendy has it: every event of the user (newest first) as one JSON
/// array, optionally between two RFC 3339 dates (both or neither, inclusive) and of some types;
/// streamed a page at a time, so a million events never sit in memory at once.
extension APIRoutes {
    /// The page the export reads at a time.
    static let exportPage = 1_000

    func exportEvents(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let query = request.uri.queryParameters
        func date(_ name: String) throws -> Int64? {
            guard let text = query.get(name) else { return nil }
            guard let date = TrendyJSON.parseDate(String(text)) else {
                throw ProblemError.malformed("invalid \(name) format, use RFC 3339 (2026-03-14T09:30:00Z)")
            }
            return StoreRules.milliseconds(date)
        }
        let start = try date("start_date")
        let end = try date("end_date")
        if (start == nil) != (end == nil) {
            throw ProblemError.malformed("give both start_date and end_date, or neither")
        }
        var range: ClosedRange<Int64>?
        if let start, let end {
            guard start <= end else { throw ProblemError.malformed("start_date must be before or equal to end_date") }
            range = start...end
        }
        var typeIds: [String] = []
        if let list = query.get("event_type_ids"), !list.isEmpty {
            for part in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let id = UUIDv7(String(part)) else {
                    throw ProblemError.malformed("event_type_ids must be event type ids separated by commas")
                }
                typeIds.append(id.description)
            }
        }
        // The first page is read before the answer starts, so a failing store is a proper error.
        let store = store
        let first = try await store.exportPage(
            userId: user, after: nil, limit: Self.exportPage, range: range, typeIds: typeIds)
        let (chosen, bounds) = (typeIds, range)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                var page = first
                var written = 0
                try await writer.write(ByteBuffer(string: "["))
                while true {
                    var chunk = ""
                    for body in page.bodies {
                        chunk += (written == 0 ? "" : ",") + body
                        written += 1
                    }
                    if !chunk.isEmpty { try await writer.write(ByteBuffer(string: chunk)) }
                    guard let next = page.next else { break }
                    page = try await store.exportPage(
                        userId: user, after: next, limit: Self.exportPage, range: bounds, typeIds: chosen)
                }
                try await writer.write(ByteBuffer(string: "]"))
                try await writer.finish(nil)
            })
    }
}
