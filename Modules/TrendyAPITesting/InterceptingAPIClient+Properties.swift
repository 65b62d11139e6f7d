import TrendyAPI
import TrendyModels

extension InterceptingAPIClient {
    /// Forwards (or fails as scripted).
    public func listPropertyDefinitions() async throws(TrendyAPIError) -> [Timestamped<PropertyDefinition>] {
        try await intercept("listPropertyDefinitions") { () throws(TrendyAPIError) in
            try await inner.listPropertyDefinitions()
        }
    }
    /// Forwards (or fails as scripted).
    public func propertyDefinitions(ofType id: UUIDv7) async throws(TrendyAPIError)
        -> [Timestamped<PropertyDefinition>]
    {
        try await intercept("propertyDefinitions", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.propertyDefinitions(ofType: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func createPropertyDefinition(_ definition: PropertyDefinition, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    {
        try await intercept("createPropertyDefinition", key: idempotencyKey, ids: [definition.id.description]) {
            () throws(TrendyAPIError) in
            try await inner.createPropertyDefinition(definition, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func propertyDefinition(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<PropertyDefinition> {
        try await intercept("propertyDefinition", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.propertyDefinition(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func updatePropertyDefinition(id: UUIDv7, _ body: PropertyDefinitionUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    {
        try await intercept("updatePropertyDefinition", key: idempotencyKey, ids: [id.description]) {
            () throws(TrendyAPIError) in
            try await inner.updatePropertyDefinition(id: id, body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func deletePropertyDefinition(id: UUIDv7) async throws(TrendyAPIError) {
        try await intercept("deletePropertyDefinition", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.deletePropertyDefinition(id: id)
        }
    }
}
