import NIOHTTP1
import TrendyAPI
import TrendyModels

extension LiveTrendyAPIClient {
    // MARK: Property definitions

    public func listPropertyDefinitions() async throws(TrendyAPIError) -> [Timestamped<PropertyDefinition>] {
        try await send(.GET, APIPaths.propertyDefinitions, as: ItemList<Timestamped<PropertyDefinition>>.self)
            .value.items
    }

    public func propertyDefinitions(ofType id: UUIDv7) async throws(TrendyAPIError)
        -> [Timestamped<PropertyDefinition>]
    {
        try await send(.GET, APIPaths.properties(ofType: id), as: ItemList<Timestamped<PropertyDefinition>>.self)
            .value.items
    }

    public func createPropertyDefinition(_ definition: PropertyDefinition, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    {
        try await send(
            .POST, APIPaths.properties(ofType: definition.eventTypeId), body: encode(definition),
            idempotencyKey: idempotencyKey, as: Timestamped<PropertyDefinition>.self
        ).value
    }

    public func propertyDefinition(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<PropertyDefinition> {
        try await send(.GET, "\(APIPaths.propertyDefinitions)/\(id)", as: Timestamped<PropertyDefinition>.self).value
    }

    public func updatePropertyDefinition(id: UUIDv7, _ body: PropertyDefinitionUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    {
        try await send(
            .PATCH, "\(APIPaths.propertyDefinitions)/\(id)", body: encode(body), idempotencyKey: idempotencyKey,
            as: Timestamped<PropertyDefinition>.self
        ).value
    }

    public func deletePropertyDefinition(id: UUIDv7) async throws(TrendyAPIError) {
        _ = try await send(.DELETE, "\(APIPaths.propertyDefinitions)/\(id)", as: Empty.self)
    }
}
