import Foundation
import Testing
import TrendySyncLive
import TrendyTestSupport

@Suite struct EventImporterTests {
    let folder = TemporaryDirectory("import")

    func file(_ text: String, ext: String = "csv") throws -> URL { try folder.file("import-\(UUID()).\(ext)", text) }

    @Test func rowsArriveInChunksWithMalformedOnesCountedByLine() async throws {
        var text = "type,timestamp,notes\n"
        for i in 0..<2_500 {
            text += i % 500 == 7 ? "Tea,not-a-time,x\n" : "Tea,2026-01-01T00:00:00Z,row \(i)\n"
        }
        let url = try file(text)
        var chunks: [Int] = []
        let summary = try await EventImporter.read(url) { rows in chunks.append(rows.count) }
        #expect(summary.rows == 2_500)
        #expect(summary.errorCount == 5)
        #expect(summary.errors.map(\.line) == [9, 509, 1_009, 1_509, 2_009])
        #expect(chunks.allSatisfy { $0 <= 1_000 })
        #expect(chunks.reduce(0, +) == 2_495)
    }

    @Test func randomlyDamagedFilesNeverCrash() async throws {
        var rng = SystemRandomNumberGenerator()
        let good = Array(
            "type,timestamp,end_date,notes,all_day\nTea,2026-01-01T00:00:00Z,,\"a, \"\"b\"\"\",true\n".utf8)
        for trial in 0..<300 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: at)
                default: bytes.insert(Array(",\"\n\r".utf8).randomElement(using: &rng)!, at: at)
                }
                if bytes.isEmpty { break }
            }
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(trial)-\(UUID()).csv")
            try Data(bytes).write(to: url)
            do {
                let summary = try await EventImporter.read(url) { rows in
                    for r in rows { #expect(!r.typeName.isEmpty) }
                }
                #expect(summary.rows >= summary.errorCount)
            } catch let error as EventImporter.FileError {
                #expect(!error.description.isEmpty)
            }
        }
    }
}

/// Issue 19, case 3: the importer reports what it cannot read, where it is, instead of guessing.
@Suite struct StrictImportTests {
    let files = EventImporterTests()

    func read(_ text: String, ext: String = "csv") async throws -> (
        rows: [EventImporter.Row], summary: EventImporter.Summary
    ) {
        let url = try files.file(text, ext: ext)
        var rows: [EventImporter.Row] = []
        let summary = try await EventImporter.read(url) { rows += $0 }
        return (rows, summary)
    }

    @Test func anUnterminatedQuoteIsReportedWithItsLineNotImported() async throws {
        let (rows, summary) = try await read(
            "type,timestamp,notes\nTea,2026-01-01T10:00:00Z,fine\nTea,2026-01-01T11:00:00Z,\"never closed\nTea,2026-01-01T12:00:00Z,x\n"
        )
        #expect(rows.map(\.notes) == ["fine"])
        #expect(summary.errors.count == 1)
        #expect(summary.errors.first?.line == 3)
        #expect(
            summary.errors.first?.description.contains("line 3: a quoted field opened on line 3 is never closed")
                == true)
    }

    @Test func quotedLineBreaksKeepLaterLineNumbersRight() async throws {
        let (rows, summary) = try await read(
            "type,timestamp,notes\r\nTea,2026-01-01T10:00:00Z,\"two\r\nlines, \"\"quoted\"\"\"\r\nTea,2026-04-31T10:00:00Z,x\r\n"
        )
        #expect(rows.map(\.notes) == ["two\r\nlines, \"quoted\""])
        #expect(rows.first?.line == 2)
        #expect(summary.errors.map(\.line) == [4])
        #expect(summary.errors.first?.reason == "timestamp '2026-04-31T10:00:00Z' is not an ISO-8601 date-time")
    }

    @Test func textAfterAClosingQuoteIsReported() async throws {
        let (rows, summary) = try await read(
            "type,timestamp,notes\nTea,2026-01-01T10:00:00Z,\"a\"b\nTea,2026-01-01T11:00:00Z,ok\n")
        #expect(rows.map(\.notes) == ["ok"])
        #expect(summary.errors.map(\.description) == ["line 2: unexpected text after a closing quote on line 2"])
    }

    @Test func aByteOrderMarkAndNonUTF8TextAreHandled() async throws {
        var bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("type,timestamp,notes\nTea,2026-01-01T10:00:00Z,".utf8)
        bytes += [0xFF, 0xFE] + Array("\nTea,2026-01-01T11:00:00Z,ok\n".utf8)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bom-\(UUID()).csv")
        try Data(bytes).write(to: url)
        var rows: [EventImporter.Row] = []
        let summary = try await EventImporter.read(url) { rows += $0 }
        #expect(rows.map(\.notes) == ["ok"])
        #expect(summary.errors.map(\.description) == ["line 2: the text is not UTF-8"])
    }

    /// A row the models refuse — as `trendy log` and the server would — is reported with its line
    /// and skipped; the good rows come through (outside tester: notes with BEL, NUL or ESC were
    /// imported and then refused by every sync; a type name with a control character failed the
    /// whole file).
    @Test func rowsTheModelsRefuseAreReportedByLineAndSkipped() async throws {
        let text =
            "type,timestamp,notes,external_id\n"
            + "Tea,2026-01-01T10:00:00Z,bell\u{07}x,\n"
            + "Tea,2026-01-01T11:00:00Z,nul\u{00}x,\n"
            + "Tea,2026-01-01T12:00:00Z,esc\u{1B}x,\n"
            + "Ctl\u{01}Type,2026-01-01T13:00:00Z,fine,\n"
            + "Tea,2026-01-01T14:00:00Z,\"two\nlines\ttab\",\n"
            + "Tea,2026-01-01T16:00:00Z,ok," + String(repeating: "e", count: 256) + "\n"
            + "\(String(repeating: "T", count: 101)),2026-01-01T17:00:00Z,ok,\n"
        let (rows, summary) = try await read(text)
        #expect(rows.map(\.notes) == ["two\nlines\ttab"])
        #expect(summary.errors.map(\.line) == [2, 3, 4, 5, 8, 9])
        #expect(summary.errors[0].reason.contains("notes: must not contain control characters"))
        #expect(summary.errors[3].reason == "type name: must not contain control characters")
        #expect(summary.errors[4].reason.contains("external_id: must be at most 255 characters"))
        #expect(summary.errors[5].reason == "type name: must be at most 100 characters")
        let (json, jsonSummary) = try await read(
            #"[{"type":"Js","timestamp":"2026-06-06T00:00:00Z","notes":"bell\u0007x"},"#
                + #"{"type":"Js","timestamp":"2026-06-06T01:00:00Z","notes":"ok"}]"#, ext: "json")
        #expect(json.map(\.notes) == ["ok"])
        #expect(jsonSummary.errors.map(\.description).first?.hasPrefix("item 1: notes:") == true)
    }

    @Test func jsonErrorsNameTheItem() async throws {
        let (rows, summary) = try await read(
            #"[{"type":"Tea","timestamp":"2026-01-01T10:00:00Z"},{"type":"Tea","timestamp":"2026-02-30T10:00:00Z"},7]"#,
            ext: "json")
        #expect(rows.count == 1)
        #expect(
            summary.errors.map(\.description) == [
                "item 2: timestamp '2026-02-30T10:00:00Z' is not an ISO-8601 date-time", "item 3: it is not an object",
            ])
        let encoded = String(decoding: try JSONEncoder().encode(summary.errors[0]), as: UTF8.self)
        #expect(encoded.contains(#""item":2"#))
        #expect(!encoded.contains(#""line""#))
    }
}
