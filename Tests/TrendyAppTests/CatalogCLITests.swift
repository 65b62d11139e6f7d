import Foundation
import Testing
import TrendyTestSupport

/// Issue 33 (part): types and places that can change, and an events list that finds things —
/// through the real binary, with bad input for every new option (a clear error, a non-zero exit,
/// nothing written).
@Suite(.timeLimit(.minutes(3)))
struct CatalogCLITests {
    func run(_ args: [String], stdin: String? = nil) async throws -> TrendyProcess.Result {
        try await TrendyProcess.run(args, stdin: stdin)
    }

    func json(_ r: TrendyProcess.Result) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]] ?? []
    }

    @Test func typesEditRenamesAndRecoloursAndRefusesWhatItCannotDo() async throws {
        let (dir, d) = try await CLISkeletonTests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        #expect(try await run(["types", "add", "Cofee"] + d).status == 0)
        #expect(try await run(["types", "add", "Tea"] + d).status == 0)
        let edited = try await run(["types", "edit", "Cofee", "--name", "Coffee", "--color", "#112233"] + d)
        #expect(edited.status == 0 && edited.stdout.contains("Changed event type Coffee"), "\(edited.stderr)")
        let types = json(try await run(["types", "--json"] + d))
        #expect(types.contains { $0["name"] as? String == "Coffee" && $0["color"] as? String == "#112233" })
        #expect(!types.contains { $0["name"] as? String == "Cofee" })
        let taken = try await run(["types", "edit", "Tea", "--name", "coffee"] + d)
        #expect(taken.status == 65, "a name taken (in any case) is refused: \(taken.stderr)")
        let colour = try await run(["types", "edit", "Tea", "--color", "red"] + d)
        #expect(colour.status != 0 && !colour.stderr.isEmpty)
        #expect(try await run(["types", "edit", "Tea"] + d).status == 64, "nothing to change")
        #expect(try await run(["types", "edit", "Nope", "--name", "X"] + d).status == 65)
        let after = json(try await run(["types", "--json"] + d))
        #expect(after.contains { $0["name"] as? String == "Tea" && $0["color"] as? String == "#3B82F6" }, "unchanged")
    }

    @Test func geofenceEditMovesResizesRetypesAndPauses() async throws {
        let (dir, d) = try await CLISkeletonTests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        for type in ["Gym", "Walk"] { #expect(try await run(["types", "add", type] + d).status == 0) }
        #expect(try await run(["geofence", "add", "Gym", "52.52", "13.405", "--type", "Gym"] + d).status == 0)
        let edited = try await run(
            [
                "geofence", "edit", "Gym", "--radius", "250", "--type", "Walk", "--name", "Big Gym", "--at",
                "52.53,13.41",
            ]
                + d)
        #expect(edited.status == 0, "\(edited.stderr)")
        var place = json(try await run(["geofence", "list", "--json"] + d)).first
        #expect(place?["name"] as? String == "Big Gym" && place?["radius"] as? Double == 250)
        #expect(place?["entry_type"] as? String == "Walk" && place?["latitude"] as? Double == 52.53)
        #expect(try await run(["geofence", "edit", "Big Gym", "--radius", "5"] + d).status == 65, "out of range")
        #expect(try await run(["geofence", "edit", "Big Gym", "--at", "91 0"] + d).status == 64)
        #expect(try await run(["geofence", "edit", "Big Gym"] + d).status == 64, "nothing to change")
        #expect(try await run(["geofence", "edit", "Nowhere", "--radius", "100"] + d).status == 65)
        #expect(try await run(["geofence", "edit", "Big Gym", "--no-active"] + d).status == 0)
        place = json(try await run(["geofence", "list", "--json"] + d)).first
        #expect(place?["radius"] as? Double == 250 && place?["active"] as? Bool == false, "refusals changed nothing")
    }

    @Test func eventsListFindsByTypeTimeSourceAndWords() async throws {
        let (dir, d) = try await CLISkeletonTests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        for type in ["Coffee", "Tea"] { #expect(try await run(["types", "add", type] + d).status == 0) }
        for (type, at, note) in [
            ("Coffee", "2026-01-01T08:00:00Z", "with Sam"), ("Tea", "2026-01-02T08:00:00Z", "green"),
            ("Coffee", "2026-01-03T08:00:00Z", "alone"),
        ] {
            #expect(try await run(["log", type, "--at", at, "--note", note] + d).status == 0)
        }
        func notes(_ args: [String]) async throws -> [String] {
            let r = try await run(["events", "list", "--json"] + args + d)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return json(r).compactMap { $0["notes"] as? String }
        }
        #expect(try await notes(["--type", "coffee"]) == ["alone", "with Sam"])
        #expect(try await notes(["--text", "SAM"]) == ["with Sam"])
        #expect(try await notes(["--text", "tea"]) == ["green"], "the type's name")
        #expect(try await notes(["--since", "2026-01-02T00:00:00Z", "--until", "2026-01-03T00:00:00Z"]) == ["green"])
        #expect(try await notes(["--source", "geofence"]).isEmpty)
        #expect(try await notes(["--all", "--type", "Coffee"]) == ["alone", "with Sam"])
        #expect(try await notes(["--limit", "1", "--type", "Coffee"]) == ["alone"])
        #expect(try await run(["events", "list", "--source", "bogus"] + d).status == 64)
        #expect(try await run(["events", "list", "--text", "  "] + d).status == 64)
        #expect(try await run(["events", "list", "--type", "Nope"] + d).status == 65)
        #expect(try await run(["events", "list", "--until", "soon"] + d).status == 64)
    }

    /// `trendy export` in the importer's columns: imported back into the same account it adds
    /// nothing (a place's visit included), into another account it makes the same events; notes
    /// with quotes, commas and line breaks survive; bad input changes nothing.
    @Test(arguments: ["csv", "json"])
    func anExportImportsBack(format: String) async throws {
        let (dir, d) = try await CLISkeletonTests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        for type in ["Coffee", "Gym"] { #expect(try await run(["types", "add", type] + d).status == 0) }
        #expect(try await run(["log", "Coffee", "--note", "with \"Sam\", at 9\nthen, more"] + d).status == 0)
        #expect(try await run(["log", "Coffee", "--at", "1969-07-20T20:17:00Z"] + d).status == 0)
        #expect(try await run(["geofence", "add", "Gym", "52.52", "13.405", "--type", "Gym"] + d).status == 0)
        #expect(try await run(["location", "set", "52.52", "13.405"] + d).status == 0, "a visit")
        let file = dir.url.appendingPathComponent("export.\(format)").path
        let exported = try await run(["export", "--format", format, "-o", file] + d)
        #expect(exported.status == 0 && exported.stdout.contains("Exported 3 event(s)"), "\(exported.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600, "owner-only: a life's history")
        let again = try await run(["import", file] + d)
        #expect(again.status == 0 && again.stdout.contains("Imported 0 event(s)"), "\(again.stdout)")
        let (other, o) = try await CLISkeletonTests.signedUp()
        defer { withExtendedLifetime(other) {} }
        #expect(try await run(["import", file] + o).status == 0)
        func events(_ args: [String]) async throws -> [String] {
            json(try await run(["events", "list", "--json"] + args)).map {
                "\($0["type"] ?? "")|\($0["timestamp"] ?? "")|\($0["notes"] as? String ?? "")"
            }
        }
        #expect(try await events(o) == (try await events(d)), "the same events in another account")
        #expect(try await run(["export", "--format", "xml"] + d).status == 64)
        #expect(try await run(["export", "--since", "soon"] + d).status == 64)
        #expect(try await run(["export", "--type", "Nope"] + d).status == 65)
        let nowhere = try await run(["export", "-o", dir.url.appendingPathComponent("no/such/dir/e.csv").path] + d)
        #expect(nowhere.status == 73 && nowhere.stderr.contains("cannot write"), "\(nowhere.stderr)")
        #expect(
            try await run(["export", "--type", "Gym"] + d).stdout.split(separator: "\n").count == 2,
            "header and the visit")
    }
}
