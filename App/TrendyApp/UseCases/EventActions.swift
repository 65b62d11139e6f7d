import Foundation
import TrendyModels
import TrendySync

/// The event use cases `trendy log` / `trendy events edit|rm` and the running app share, each
/// written once: it writes to the local store, then tells the sync engine (a pass running now
/// takes the write in a follow-up). Store refusals come back as `LocalStoreError`, for the caller
/// to word (the CLI as a `CLIError` with its exit code, the app as a line under the screen).
struct EventActions {
    let env: AppEnvironment

    /// Logs an event of the type `typeId` at `at` (now when nil), with `note` and `properties`.
    func log(
        typeId: UUIDv7, at: Date? = nil, note: String? = nil, properties: [String: PropertyValue] = [:]
    ) async throws -> Event {
        var event = Event(id: env.ids.next(), eventTypeId: typeId, timestamp: at ?? env.now(), notes: note)
        event.properties = properties
        try await env.store.createEvent(event)
        await env.sync.localWriteHappened()
        return event
    }

    /// Changes the stored event `id` with `edit`; the event as saved, or nil when it is not here.
    func change(_ id: UUIDv7, _ edit: (inout Event) -> Void) async throws -> Event? {
        guard var event = try await env.store.event(id: id)?.value else { return nil }
        edit(&event)
        try await env.store.updateEvent(event)
        await env.sync.localWriteHappened()
        return event
    }

    /// Deletes the event `id` here; the server forgets it with the next pass.
    func delete(_ id: UUIDv7) async throws {
        try await env.store.deleteEvent(id: id)
        await env.sync.localWriteHappened()
    }
}
