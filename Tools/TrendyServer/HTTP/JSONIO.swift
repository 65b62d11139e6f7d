import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyModels

/// Reading request bodies and writing JSON responses with the wire format's coders.
enum JSONIO {
    /// Collects the body up to the configured limit (413 beyond it).
    static func body(_ request: Request, context: ServerRequestContext) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: context.maxBodySize)
        } catch is NIOTooManyBytesError {
            throw ProblemError(
                413, ProblemCode.payloadTooLarge, "Payload too large",
                detail: "The body is larger than \(context.maxBodySize) bytes.")
        }
    }

    /// Refuses `null` for fields that cannot be null (422, one issue per field): a PATCH body
    /// whose payload type reads `null` and "absent" alike would otherwise ignore it silently.
    static func rejectNulls(in buffer: ByteBuffer, for fields: [String]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
            return
        }
        let nulls = fields.filter { object[$0] is NSNull }
        guard nulls.isEmpty else {
            throw ProblemError.validation(nulls.map { FieldIssue(field: $0, reason: "cannot be null") })
        }
    }

    /// Decodes the body as `T`; malformed JSON → 400 with the decoder's explanation.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        guard buffer.readableBytes > 0 else { throw ProblemError.malformed("The request body is empty.") }
        do {
            return try TrendyJSON.decoder().decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw problem(for: error)
        } catch {
            throw ProblemError.malformed("The body is not valid JSON.")
        }
    }

    /// A decoding failure as a problem: `null` where a value is required is a field error (422,
    /// like every other "cannot be null"); anything else is a malformed body (400).
    static func problem(for error: DecodingError) -> ProblemError {
        if case .valueNotFound(_, let context) = error, let field = fieldPath(context) {
            return .validation([FieldIssue(field: field, reason: "cannot be null")])
        }
        return .malformed(describe(error))
    }

    /// The JSON path of a decoding context (`events[2].is_all_day`), nil at the top.
    static func fieldPath(_ context: DecodingError.Context) -> String? {
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return path.isEmpty ? nil : path
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String { fieldPath(context).map { " at \($0)" } ?? "" }
        switch error {
        case .dataCorrupted(let c):
            if c.codingPath.isEmpty { return "The body is not valid JSON." }
            return "Invalid value\(path(c)): \(c.debugDescription)"
        case .keyNotFound(let key, let c):
            return "Missing field '\(key.stringValue)'\(path(c))."
        case .typeMismatch(_, let c), .valueNotFound(_, let c):
            return "Wrong type\(path(c)): \(c.debugDescription)"
        @unknown default:
            return "The body could not be read."
        }
    }

    /// A JSON response.
    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        throws -> Response
    {
        let data = try TrendyJSON.encoder().encode(value)
        return raw(data, status: status, headers: headers)
    }

    /// A response from JSON bytes.
    static func raw(_ bytes: some Sequence<UInt8>, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// An empty 204.
    static func noContent() -> Response { Response(status: .noContent) }
}
