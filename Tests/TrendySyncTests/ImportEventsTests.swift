import Foundation
import Testing
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

/// The import use case on an in-memory store: no CLI, no server.
@Suite struct ImportEventsTests {
    let folder = TemporaryDirectory("import")

    func file(_ text: String, ext: String = "csv") throws -> URL { try folder.file("import-\(UUID()).\(ext)", text) }

    @Test func unknownTypesAreCreatedOnceAndRowsBecomeImportedEvents() async throws {
        let store = try MemoryLocalStore.make()
        try await store.createEventType(EventType(id: UUIDv7Generator().next(), name: "Coffee"))
        let url = try file(
            """
            type,timestamp,notes,external_id
            coffee,2026-01-01T08:00:00Z,first,c1
            Tea,2026-01-01T09:00:00Z,,t1
            tea,2026-01-01T10:00:00Z,,t2
            Tea,not-a-time,,t3
            Run,2026-01-02T07:00:00Z,,r1
            """)
        var progress: [Int] = []
        let report = try await ImportEvents(store: store, ids: UUIDv7Generator()).run(url, chunkSize: 2) {
            progress.append($0)
        }
        #expect(report.rows == 5)
        #expect(report.imported == 4)
        #expect(report.duplicates == 0)
        #expect(report.errorCount == 1 && report.errors.first?.line == 5)
        // "coffee" matched the existing "Coffee"; "tea" and "Tea" are one type.
        #expect(report.createdTypes == ["Tea", "Run"])
        #expect(try await store.eventTypes().map(\.value.name).sorted() == ["Coffee", "Run", "Tea"])
        let events = try await store.events(limit: 10, since: nil).map(\.value)
        #expect(events.count == 4 && events.allSatisfy { $0.sourceType == .imported })
        #expect(progress.last == 4, "progress counts the good rows read")

        // The same file again adds nothing.
        let again = try await ImportEvents(store: store, ids: UUIDv7Generator()).run(url)
        #expect(again.imported == 0 && again.duplicates == 4 && again.createdTypes.isEmpty)
    }

    @Test func anUnreadableFileIsAFileErrorAndWritesNothing() async throws {
        let store = try MemoryLocalStore.make()
        let url = try file("anything", ext: "txt")
        await #expect(throws: EventImporter.FileError.self) {
            try await ImportEvents(store: store, ids: UUIDv7Generator()).run(url)
        }
        #expect(try await store.eventTypes().isEmpty)
    }
}
