import Foundation
import Hummingbird
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyModels

/// Property definitions: Trendy's routes (`/event-types/{id}/properties`,
/// `/property-definitions/{id}`) and the list of every definition a new device downloads.
extension APIRoutes {
    func listPropertiesOfType(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let typeId = try pathId(context, "event type")
        guard try await store.eventType(userId: user, id: typeId) != nil else {
            throw ProblemError.notFound("event type")
        }
        return try JSONIO.response(
            ItemList(items: try await store.listPropertyDefinitions(userId: user, typeId: typeId)))
    }

    func listPropertyDefinitions(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(ItemList(items: try await store.listPropertyDefinitions(userId: user, typeId: nil)))
    }

    func createPropertyDefinition(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let typeId = try pathId(context, "event type")
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(PropertyDefinitionCreate.self, from: buffer)
        try JSONIO.rejectNulls(
            in: buffer, for: ["id", "event_type_id", "key", "label", "property_type", "display_order"])
        if let named = body.eventTypeId, named.description != typeId {
            throw ProblemError.validation([
                FieldIssue(field: "event_type_id", reason: "must be the event type of the path (or left out)")
            ])
        }
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            let definition = body.definition(typeId: UUIDv7(typeId)!, newId: ids.next())
            try validate(definition)
            let (stored, created) = try await storeCall {
                try await store.createPropertyDefinition(userId: user, definition, now: now())
            }
            return try APIResult.json(stored, status: created ? 201 : 200)
        }
    }

    func getPropertyDefinition(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "property definition")
        guard let stored = try await store.propertyDefinition(userId: user, id: id) else {
            throw ProblemError.notFound("property definition")
        }
        return try JSONIO.response(stored)
    }

    func updatePropertyDefinition(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "property definition")
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(PropertyDefinitionUpdate.self, from: buffer)
        let base = try changeBase(request)
        if !body.clearedRequiredFields.isEmpty {
            throw ProblemError.validation(
                body.clearedRequiredFields.map { FieldIssue(field: $0, reason: "cannot be null") })
        }
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try APIResult.json(
                try await storeCall {
                    try await store.updatePropertyDefinition(userId: user, id: id, body, base: base, now: now())
                })
        }
    }

    func deletePropertyDefinition(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "property definition")
        try await storeCall {
            try await store.deletePropertyDefinition(userId: user, id: id, base: try changeBase(request), now: now())
        }
        return await idempotency.marked(JSONIO.noContent(), userId: user)
    }
}
