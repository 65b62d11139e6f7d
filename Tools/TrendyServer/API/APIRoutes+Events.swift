import Foundation
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyModels

/// Decodes one batch item without failing the whole batch when it is malformed.
struct LenientEvent: Decodable {
    let result: Result<Event, ProblemError>

    init(event: Event) { result = .success(event) }

    init(from decoder: any Decoder) throws {
        do {
            result = .success(try Event(from: decoder))
        } catch let error as DecodingError {
            result = .failure(JSONIO.problem(for: error))
        }
    }
}

struct LenientBatch: Decodable {
    let events: [LenientEvent]

    /// The fast path: every item reads without `JSONDecoder` (``Event/scan(_:)``, the reader the
    /// client's change-feed pages use). Nil sends the batch through `JSONDecoder`, which reports
    /// each bad item precisely.
    static func fast(_ buffer: ByteBuffer) -> LenientBatch? {
        buffer.withUnsafeReadableBytes { raw -> LenientBatch? in
            var s = WireJSONScanner(raw.bindMemory(to: UInt8.self))
            guard s.consume(UInt8(ascii: "{")) else { return nil }
            var events: [LenientEvent]?
            var first = true
            while let key = s.nextKey(&first) {
                if s.equals(key, "events") {
                    events = s.array { Event.scan(&$0).map { LenientEvent(event: $0.event) } }
                } else {
                    _ = s.skipValue()
                }
                if s.failed { return nil }
            }
            guard !s.failed, s.atEnd(), let events else { return nil }
            return LenientBatch(events: events)
        }
    }
}

extension APIRoutes {
    /// Checks an event the way every create does: model validation and an id that is not more
    /// than a minute in the future.
    func check(_ event: Event) -> ProblemError? {
        var issues: [FieldIssue] = []
        do { try event.validate() } catch { issues = error.issues }
        if event.id.timestamp.timeIntervalSince(now()) > 60 {
            issues.append(FieldIssue(field: "id", reason: "its timestamp is more than a minute in the future"))
        }
        return issues.isEmpty ? nil : .validation(issues)
    }

    func listEvents(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let limit = try intQuery(request, "limit", default: 50, range: 1...APIPaths.maxEventsLimit)
        let offset = try intQuery(request, "offset", default: 0, range: 0...Int.max)
        var start = EventPageStart.offset(offset)
        if let token = request.uri.queryParameters.get("after") {
            guard let key = EventPageKey(token: String(token)) else {
                throw ProblemError.validation([
                    FieldIssue(field: "after", reason: "must be the next token of an earlier page")
                ])
            }
            start = .after(key, skipping: offset)
        }
        let listing = try await store.listEvents(userId: user, limit: limit, from: start)
        // Stored bodies are already the wire JSON of each item: spliced, not re-encoded. Every
        // page but the last says where the next one starts (keyset paging), also for offset paging.
        let next = listing.next.map { ",\"next\":\"\($0.token)\"" } ?? ""
        let json =
            "{\"has_more\":\(listing.next != nil),\"items\":[" + listing.bodies.joined(separator: ",")
            + "],\"limit\":\(limit)\(next),\"offset\":\(offset)}"
        return JSONIO.raw(Data(json.utf8), status: .ok)
    }

    func getEvent(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event")
        guard let stored = try await store.event(userId: user, id: id) else { throw ProblemError.notFound("event") }
        return try JSONIO.response(stored)
    }

    func createEvent(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let event = try JSONIO.decode(Event.self, from: buffer)
        let device = try deviceId(request)
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            if let problem = check(event) { throw problem }
            let outcome = try await storeCall {
                try await store.createEvents(userId: user, [event], device: device, now: now())
            }
            switch outcome.first {
            case .created(let stored): return try APIResult.json(stored, status: 201)
            case .existing(let stored): return try APIResult.json(stored, status: 200)
            case .deleted(_, let version):
                throw ProblemError.from(StoreError.deletedId(event.id.description, version: version))
            case .failed(let error): throw ProblemError.from(error)
            case .none: throw ProblemError(500, ProblemCode.internalError, "Internal server error")
            }
        }
    }

    func createEventBatch(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let batch = try LenientBatch.fast(buffer) ?? JSONIO.decode(LenientBatch.self, from: buffer)
        guard !batch.events.isEmpty, batch.events.count <= APIPaths.maxBatchSize else {
            throw ProblemError.validation([
                FieldIssue(field: "events", reason: "must hold 1 to \(APIPaths.maxBatchSize) events")
            ])
        }
        metrics.batch(batch.events.count)
        let device = try deviceId(request)
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            var results = [EventBatchItemResult?](repeating: nil, count: batch.events.count)
            var valid: [(index: Int, event: Event)] = []
            for (index, item) in batch.events.enumerated() {
                switch item.result {
                case .failure(let problem):
                    results[index] = EventBatchItemResult(
                        index: index, id: nil, status: .failed, error: problem.problem)
                case .success(let event):
                    if let problem = check(event) {
                        results[index] = EventBatchItemResult(
                            index: index, id: event.id.description, status: .failed, error: problem.problem)
                    } else {
                        valid.append((index, event))
                    }
                }
            }
            let outcomes = try await storeCall {
                try await store.createEvents(userId: user, valid.map(\.event), device: device, now: now())
            }
            for (item, outcome) in zip(valid, outcomes) {
                switch outcome {
                case .created(let stored):
                    results[item.index] = .init(index: item.index, id: stored.value.id.description, status: .created)
                case .existing(let stored):
                    results[item.index] = .init(index: item.index, id: stored.value.id.description, status: .existing)
                case .deleted(let id, let version):
                    results[item.index] = .init(index: item.index, id: id, status: .deleted, deletedVersion: version)
                case .failed(let error):
                    results[item.index] = .init(
                        index: item.index, id: item.event.id.description, status: .failed,
                        error: ProblemError.from(error).problem)
                }
            }
            let response = EventBatchResponse(results: results.compactMap { $0 })
            let status = response.failed == 0 ? 201 : (response.failed == response.results.count ? 400 : 207)
            return APIResult(status: status, body: response.wireJSON())
        }
    }

    func updateEvent(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event")
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(EventUpdate.self, from: buffer)
        let base = try changeBase(request)
        if !body.clearedRequiredFields.isEmpty {
            throw ProblemError.validation(
                body.clearedRequiredFields.map { FieldIssue(field: $0, reason: "cannot be null") })
        }
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try APIResult.json(
                try await storeCall { try await store.updateEvent(userId: user, id: id, body, base: base, now: now()) })
        }
    }

    func deleteEvent(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event")
        try await storeCall {
            try await store.deleteEvent(userId: user, id: id, base: try changeBase(request), now: now())
        }
        return await idempotency.marked(JSONIO.noContent(), userId: user)
    }
}
