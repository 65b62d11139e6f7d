import Foundation
import Testing
import TrendySyncLive

@Suite struct EventImporterTests {
    func file(_ text: String, ext: String = "csv") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID()).\(ext)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test func rowsArriveInChunksWithMalformedOnesCountedByLine() async throws {
        var text = "type,timestamp,notes\n"
        for i in 0..<2_500 {
            text += i % 500 == 7 ? "Tea,not-a-time,x\n" : "Tea,2026-01-01T00:00:00Z,row \(i)\n"
        }
        let url = try file(text)
        defer { try? FileManager.default.removeItem(at: url) }
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
            defer { try? FileManager.default.removeItem(at: url) }
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
