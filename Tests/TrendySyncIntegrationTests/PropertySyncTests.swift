import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// Property definitions on the device: the orders of events the simulation found (issue 33).
@Suite(.timeLimit(.minutes(5)))
struct PropertySyncTests {
    let ids = UUIDv7Generator()

    /// Simulation seed 249: a definition's create was on the wire when its type's delete (made
    /// on another device) was applied here; the server refused the create (no such type) and the
    /// refusal stayed, failed, for ever. The type's delete now tombstones its definitions.
    @Test func aDefinitionCreateOnTheWireWhenItsTypeGoesIsDroppedNotFailed() async throws {
        let store = try MemoryLocalStore.make()
        let type = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(type)
        try await store.complete(try await store.nextWork(now: Date(), batchSize: 50).entries)
        let definition = PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number)
        try await store.createPropertyDefinition(definition)
        let onTheWire = try await store.nextWork(now: Date(), batchSize: 50).entries
        #expect(onTheWire.map(\.entity) == [.propertyDefinition])
        let delete = Change(
            cursor: 1, entityType: .eventType, entityId: type.id.description, operation: .delete, data: nil,
            createdAt: Date())
        _ = try await store.apply(ChangesPage(changes: [delete], nextCursor: 1, hasMore: false))
        try await store.fail(onTheWire[0], error: "404 not_found: No such event type.")
        #expect(try await store.failedChanges().isEmpty)
        #expect(try await store.outboxCounts().pending == 0)
        #expect(try await store.propertyDefinitions(ofType: nil).isEmpty)
    }

    /// Two devices define one key: the adopted definition's label, kind and options are the
    /// server's, and this device's, where they differ, are kept as conflicts that restore.
    @Test func anAdoptedDefinitionKeepsThisDevicesFieldsAsConflicts() async throws {
        let store = try MemoryLocalStore.make()
        let type = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(type)
        try await store.complete(try await store.nextWork(now: Date(), batchSize: 50).entries)
        let mine = PropertyDefinition(
            id: ids.next(), eventTypeId: type.id, key: "milk", label: "Milk please", propertyType: .select,
            options: ["oat", "soy"])
        try await store.createPropertyDefinition(mine)
        let entry = try #require(try await store.nextWork(now: Date(), batchSize: 50).entries.first)
        let theirs = PropertyDefinition(
            id: ids.next(), eventTypeId: type.id, key: "milk", propertyType: .select, options: ["oat", "whole"])
        try await store.adoptPropertyDefinition(entry, as: theirs)
        #expect(try await store.propertyDefinitions(ofType: type.id).map(\.value) == [theirs])
        let conflicts = try await store.conflicts(includeClosed: false).map(\.conflict)
        #expect(Set(conflicts.compactMap(\.field)) == ["label", "options"])
        #expect(conflicts.allSatisfy { $0.entityId == theirs.id.description })
        let options = try #require(conflicts.first { $0.field == "options" })
        _ = try await store.restoreConflict(id: options.id, newId: ids.next())
        #expect(try await store.propertyDefinitions(ofType: type.id).first?.value.options == ["oat", "soy"])
        #expect(try await store.outboxCounts().pending == 1, "the restored options are sent as an edit")
    }

    /// A definition's edit the server refused when the server no longer has the definition (its
    /// delete crossed the edit): it goes here too, with nothing left to send.
    @Test func aRefusedEditOfADefinitionGoneFromTheServerRemovesItHere() async throws {
        let store = try MemoryLocalStore.make()
        let type = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(type)
        var definition = PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number)
        try await store.createPropertyDefinition(definition)
        try await store.complete(try await store.nextWork(now: Date(), batchSize: 50).entries)
        definition.label = "Shots"
        try await store.updatePropertyDefinition(definition)
        let edit = try #require(try await store.nextWork(now: Date(), batchSize: 50).entries.first)
        try await store.undoRefusedDefinitionEdit(edit, server: nil, reason: "422")
        #expect(try await store.propertyDefinitions(ofType: nil).isEmpty)
        #expect(try await store.outboxCounts() == (0, 0))
    }
}

/// Simulation seed 718 on two instances: a device whose download starts over after another
/// device deleted a type must take the type away as the feed's delete would — with its cascade —
/// so a definition made here on it and never sent is kept as a `deleted` conflict, not left to
/// fail for ever on a type the server does not have. Since a download sends again what the
/// server did not list (it may have lost it), the type goes once the server answers that it
/// deleted it: within the same pass.
@Suite(.timeLimit(.minutes(6)))
struct BootstrapTypeCascadeTests {
    @Test func aTypeGoneBeforeADownloadTakesItsUnsentDefinitionAsAConflict() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type("Tea")
            let kept = try await h.type("Coffee")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let definition = PropertyDefinition(
                id: h.ids.next(), eventTypeId: type.id, key: "milk", propertyType: .text)
            try await h.store.createPropertyDefinition(definition)
            try await h.direct.deleteEventType(id: type.id)

            _ = try await h.engine.bootstrap(user: h.userId)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.eventTypes().map(\.value.id) == [kept.id])
            #expect(try await h.store.propertyDefinitions(ofType: nil).isEmpty)
            let conflicts = try await h.store.conflicts(includeClosed: false).map(\.conflict)
            #expect(conflicts.map(\.kind) == [.deleted])
            #expect(conflicts.first?.entityId == definition.id.description)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }
}
