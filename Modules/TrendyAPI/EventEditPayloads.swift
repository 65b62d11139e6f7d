import Foundation
import TrendyModels

/// One item of `POST /events/edits`: a field-level patch of one event, or its delete, with what
/// the change was based on (the same as a `PATCH`'s or `DELETE`'s ``ChangeBase`` headers).
public struct EventEditItem: Sendable, Equatable {
    /// What the item does.
    public enum Operation: String, Codable, Sendable {
        /// A field-level patch (`fields`, an ``EventUpdate``).
        case update
        /// The event's delete.
        case delete
    }

    /// The event's id.
    public var id: UUIDv7
    /// What the item does.
    public var operation: Operation
    /// For an update, the patch as JSON object text (an ``EventUpdate``'s wire form: absent
    /// fields keep their value, `null` clears). The outbox keeps patches this way, so the push
    /// path sends them without decoding them again.
    public var fieldsJSON: String?
    /// What the change was based on; nil says nothing (the server then keeps no conflicts).
    public var base: ChangeBase?

    /// A patch.
    public init(update id: UUIDv7, _ fields: EventUpdate, base: ChangeBase?) throws {
        self.id = id
        operation = .update
        fieldsJSON = String(decoding: try TrendyJSON.encoder().encode(fields), as: UTF8.self)
        self.base = base
    }

    /// A patch already in wire JSON.
    public init(update id: UUIDv7, fieldsJSON: String, base: ChangeBase?) {
        self.id = id
        operation = .update
        self.fieldsJSON = fieldsJSON
        self.base = base
    }

    /// A delete.
    public init(delete id: UUIDv7, base: ChangeBase?) {
        self.id = id
        operation = .delete
        fieldsJSON = nil
        self.base = base
    }

    /// The patch, decoded (nil for a delete).
    public func fields() throws -> EventUpdate? {
        try fieldsJSON.map { try TrendyJSON.decoder().decode(EventUpdate.self, from: Data($0.utf8)) }
    }

    /// The item's wire JSON: `{"id":…,"op":"update","fields":{…},"base_version":…,"device_id":…}`.
    public var wireJSON: String {
        var json = "{\"id\":\"\(id.description)\",\"op\":\"\(operation.rawValue)\""
        if let fieldsJSON { json += ",\"fields\":" + fieldsJSON }
        if let base {
            json += ",\"base_version\":\(base.version),\"device_id\":"
            WireText.appendString(base.deviceId, to: &json)
        }
        return json + "}"
    }
}

/// What happened to one item of `POST /events/edits`.
public struct EventEditItemResult: Codable, Sendable, Equatable {
    /// Outcome of one item.
    public enum Status: String, Codable, Sendable {
        /// The patch is applied (a field another device changed meanwhile is kept as a conflict).
        case updated
        /// The event is deleted (edits the deleting device had not seen are kept as a conflict).
        case deleted
        /// The event was deleted before this patch arrived: the patch is kept as a conflict (a
        /// single `PATCH` answers 410).
        case gone
        /// No such event (a single request answers 404); for a delete, what was asked is so.
        case notFound = "not_found"
        /// Refused; see `error` (a single request answers its status, 400 or 422).
        case failed
    }

    /// Position in the request.
    public var index: Int
    /// The event's id, when the item named one.
    public var id: String?
    /// The outcome.
    public var status: Status
    /// Why it was not applied (`gone`, `not_found`, `failed`).
    public var error: APIProblem?

    /// Creates a result.
    public init(index: Int, id: String?, status: Status, error: APIProblem? = nil) {
        self.index = index
        self.id = id
        self.status = status
        self.error = error
    }
}

/// The answer to `POST /events/edits`: 200 when every item was applied, 207 when some were not.
/// Items are applied in request order, each on its own (one item's refusal changes nothing for
/// the others), in one transaction.
public struct EventEditResponse: Codable, Sendable, Equatable {
    /// One result per item, in request order.
    public var results: [EventEditItemResult]
    /// How many patches were applied.
    public var updated: Int
    /// How many events were deleted.
    public var deleted: Int
    /// How many items were not applied (`gone`, `not_found` or `failed`).
    public var failed: Int

    /// Creates a response.
    public init(results: [EventEditItemResult]) {
        self.results = results
        updated = results.filter { $0.status == .updated }.count
        deleted = results.filter { $0.status == .deleted }.count
        failed = results.count - updated - deleted
    }
}

extension EventEditItemResult.Status {
    /// The item status a single request's error stands for: 404 `notFound`, 410 `gone`, a
    /// refusal of the item itself (400, 409, 413, 422) `failed`; nil for what stops the whole
    /// batch (the network, 5xx, 429, 401, an unreadable answer).
    public init?(refusal error: TrendyAPIError) {
        switch error {
        case .notFound: self = .notFound
        case .server(410, _): self = .gone
        case .validation, .badRequest, .conflict, .payloadTooLarge: self = .failed
        case .server, .transport, .decoding, .rateLimited, .unauthorized: return nil
        }
    }
}

extension EventEditItemResult {
    /// Why the item was not applied, as the error a single request would have thrown (nil when
    /// it was applied).
    public var refusal: TrendyAPIError? {
        switch status {
        case .updated, .deleted: return nil
        case .notFound:
            return .notFound(error ?? APIProblem(status: 404, code: "not_found", title: "Not found"))
        case .gone: return .server(status: 410, problem: error)
        case .failed:
            let problem = error ?? APIProblem(status: 422, code: "validation_failed", title: "Refused")
            return TrendyAPIError.from(status: problem.status, problem: problem, retryAfter: nil)
        }
    }
}

extension EventEditResponse {
    /// `edits` sent one request each (`update`: a `PATCH /events/{id}` of the item at an index,
    /// `delete`: a `DELETE`,
    /// each called with the item's ``ChangeBase`` current), for a server without
    /// `POST /events/edits`: each item's refusal becomes its result, and what stops the requests
    /// (the network, a 5xx, a lost session) stops the batch.
    public static func oneByOne(
        _ edits: [EventEditItem], update: (_ index: Int, UUIDv7, EventUpdate) async throws(TrendyAPIError) -> Void,
        delete: (UUIDv7) async throws(TrendyAPIError) -> Void
    ) async throws(TrendyAPIError) -> EventEditResponse {
        var results: [EventEditItemResult] = []
        for (index, edit) in edits.enumerated() {
            let id = edit.id.description
            let outcome: Result<Void, TrendyAPIError> = await ChangeBase.$current.withValue(edit.base) {
                do throws(TrendyAPIError) {
                    switch edit.operation {
                    case .update:
                        let fields: EventUpdate
                        do { fields = try edit.fields() ?? EventUpdate() } catch {
                            // Unreadable here: the item's own refusal, as the server's would be.
                            throw .badRequest(
                                APIProblem(
                                    status: 400, code: "malformed_request", title: "Malformed request",
                                    detail: "an edit's fields are not an event patch: \(error)"))
                        }
                        try await update(index, edit.id, fields)
                    case .delete:
                        try await delete(edit.id)
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success:
                results.append(.init(index: index, id: id, status: edit.operation == .update ? .updated : .deleted))
            case .failure(let error):
                guard let status = EventEditItemResult.Status(refusal: error) else { throw error }
                results.append(.init(index: index, id: id, status: status, error: error.problem))
            }
        }
        return EventEditResponse(results: results)
    }
}
