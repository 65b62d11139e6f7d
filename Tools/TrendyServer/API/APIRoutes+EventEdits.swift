import Foundation
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyModels

/// One item of `POST /events/edits`, read on its own so that a bad item is named by its index.
struct LenientEdit: Decodable {
    let result: Result<EventEdit, ProblemError>

    enum CodingKeys: String, CodingKey {
        case id, op, fields
        case baseVersion = "base_version"
        case deviceId = "device_id"
    }

    init(from decoder: any Decoder) throws {
        let container: KeyedDecodingContainer<CodingKeys>
        do {
            container = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            result = .failure(.malformed("an edit must be an object"))
            return
        }
        do {
            result = .success(try Self.edit(container))
        } catch let problem as ProblemError {
            result = .failure(problem)
        } catch let error as DecodingError {
            result = .failure(JSONIO.problem(for: error))
        }
    }

    static func edit(_ c: KeyedDecodingContainer<CodingKeys>) throws -> EventEdit {
        guard let text = try c.decodeIfPresent(String.self, forKey: .id), let id = UUIDv7(text) else {
            throw ProblemError.validation([FieldIssue(field: "id", reason: "must be an event's id (a UUIDv7)")])
        }
        let base = try Self.base(c)
        switch try c.decodeIfPresent(String.self, forKey: .op) {
        case "update":
            guard c.contains(.fields), let fields = try c.decodeIfPresent(EventUpdate.self, forKey: .fields) else {
                throw ProblemError.validation([FieldIssue(field: "fields", reason: "an update needs its fields")])
            }
            if !fields.clearedRequiredFields.isEmpty {
                throw ProblemError.validation(
                    fields.clearedRequiredFields.map { FieldIssue(field: "fields.\($0)", reason: "cannot be null") })
            }
            return EventEdit(id: id.description, update: fields, base: base)
        case "delete":
            guard !c.contains(.fields) else {
                throw ProblemError.validation([FieldIssue(field: "fields", reason: "a delete has no fields")])
            }
            return EventEdit(id: id.description, update: nil, base: base)
        default:
            throw ProblemError.validation([FieldIssue(field: "op", reason: "must be \"update\" or \"delete\"")])
        }
    }

    /// The item's base, as the headers of a single request give it (``APIRoutes/changeBase(_:)``).
    static func base(_ c: KeyedDecodingContainer<CodingKeys>) throws -> ChangeBase? {
        for key in [CodingKeys.deviceId, .baseVersion] where c.contains(key) {
            if try c.decodeNil(forKey: key) {
                throw ProblemError.validation([FieldIssue(field: key.stringValue, reason: "cannot be null")])
            }
        }
        let device = try c.decodeIfPresent(String.self, forKey: .deviceId)
        if let issue = BaseRules.deviceIssue(device) {
            throw ProblemError.validation([FieldIssue(field: "device_id", reason: issue)])
        }
        guard let version = try c.decodeIfPresent(Int64.self, forKey: .baseVersion) else { return nil }
        if let issue = BaseRules.versionIssue(version) {
            throw ProblemError.validation([FieldIssue(field: "base_version", reason: issue)])
        }
        return BaseRules.base(version: version, device: device)
    }
}

/// The body of `POST /events/edits`.
struct LenientEdits: Decodable {
    let edits: [LenientEdit]
}

extension APIRoutes {
    /// `POST /events/edits`: up to 500 patches and deletes, applied in order in one transaction,
    /// each answered on its own (200 when every one was applied, 207 when some were not).
    func editEventBatch(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let batch = try JSONIO.decode(LenientEdits.self, from: buffer)
        guard !batch.edits.isEmpty, batch.edits.count <= APIPaths.maxBatchSize else {
            throw ProblemError.validation([
                FieldIssue(field: "edits", reason: "must hold 1 to \(APIPaths.maxBatchSize) edits")
            ])
        }
        let edits = try Self.wellFormed(batch.edits)
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            let outcomes = try await storeCall { try await store.editEvents(userId: user, edits, now: now()) }
            let response = EventEditResponse(
                results: zip(edits, outcomes).enumerated().map { Self.result($1.1, of: $1.0, at: $0) })
            return try APIResult.json(response, status: response.failed == 0 ? 200 : 207)
        }
    }

    /// The items, when every one is well-formed. One that is not refuses the whole request (400
    /// or 422, naming `edits[i]`) before anything is applied: a client that sends it has a bug,
    /// and the items after it may depend on it. Refusals that depend on stored state are per item.
    static func wellFormed(_ items: [LenientEdit]) throws -> [EventEdit] {
        var edits: [EventEdit] = []
        var issues: [FieldIssue] = []
        for (index, item) in items.enumerated() {
            switch item.result {
            case .success(let edit): edits.append(edit)
            case .failure(let problem) where problem.problem.status == 400:
                throw ProblemError.malformed("edits[\(index)]: \(problem.problem.detail ?? problem.problem.title)")
            case .failure(let problem):
                issues += (problem.problem.errors ?? []).map {
                    FieldIssue(field: "edits[\(index)]" + ($0.field.isEmpty ? "" : ".\($0.field)"), reason: $0.reason)
                }
            }
        }
        if !issues.isEmpty { throw ProblemError.validation(issues) }
        return edits
    }

    /// One item's result as a single request would have answered it.
    static func result(_ outcome: EventEditOutcome, of edit: EventEdit, at index: Int) -> EventEditItemResult {
        switch outcome {
        case .updated: return .init(index: index, id: edit.id, status: .updated)
        case .deleted: return .init(index: index, id: edit.id, status: .deleted)
        case .failed(let error):
            let status: EventEditItemResult.Status
            switch error {
            case .notFound: status = .notFound
            case .gone: status = .gone
            default: status = .failed
            }
            return .init(index: index, id: edit.id, status: status, error: ProblemError.from(error).problem)
        }
    }
}

/// A change's base, whoever reads it — a single request's headers, a batch item, the feed's
/// `omit_device` — by the same rules (they were written out twice, review of issue 35).
enum BaseRules {
    static let versionReason = "must be a change-feed cursor (an integer ≥ 0)"

    /// Why `device` cannot name a device (1 to 100 characters), if it cannot.
    static func deviceIssue(_ device: String?) -> String? {
        guard let device else { return nil }
        return device.isEmpty || device.unicodeScalars.count > 100 ? "must be 1 to 100 characters" : nil
    }

    /// Why `version` cannot be a base, if it cannot.
    static func versionIssue(_ version: Int64) -> String? { version >= 0 ? nil : versionReason }

    /// The base; a change without a device is compared as the device `unknown`.
    static func base(version: Int64, device: String?) -> ChangeBase {
        ChangeBase(version: version, deviceId: device ?? "unknown")
    }
}
