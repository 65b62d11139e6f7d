import Foundation
import Testing
import TrendyTestSupport

/// Issue 33: custom properties through the real binary — defined, logged, edited, listed,
/// synced between two devices (also when both define the same key at once), with bad input for
/// every new option (a clear error, a non-zero exit, nothing written).
@Suite(.timeLimit(.minutes(5)))
struct PropertyCLITests {
    let cli = SyncCLITests()

    /// The binary on a thread of its own: a test waiting for it keeps no cooperative thread (a
    /// dozen such tests at once starved the suite's timed tests for 20 s).
    func run(_ args: [String], stdin: String? = nil) async throws -> TrendyProcess.Result {
        try await TrendyProcess.run(args, stdin: stdin)
    }

    /// A signed-up install on the embedded backend (as `CLISkeletonTests.signedUp`, off the
    /// cooperative threads).
    static func signedUp() async throws -> (TemporaryDirectory, [String]) {
        let dir = TemporaryDirectory("trendy-cli", create: false)
        let d = ["--data-dir", dir.path]
        let signup = try await TrendyProcess.run(
            ["signup", "--email", "cli-\(UUID().uuidString.prefix(6))@example.com", "--password-stdin"] + d,
            stdin: "password-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        return (dir, d)
    }

    func array(_ r: TrendyProcess.Result) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]] ?? []
    }

    @Test func propertiesAreDefinedChangedAndRemovedAndBadOnesRefused() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        #expect(try await run(["types", "add", "Coffee"] + d).status == 0)
        let added = try await run(
            ["types", "props", "add", "Coffee", "shots", "--type", "number", "--default", "2"] + d)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(
            try await run(
                ["types", "props", "add", "Coffee", "milk", "--type", "select", "--options", "oat, whole"] + d
            )
            .status == 0)
        for (args, status) in [
            (["shots2", "--type", "number"], 0),
            (["Shots", "--type", "text"], 65),  // the key is taken, in any case
            (["notes", "--type", "text"], 65),  // a column of every event
            (["2x", "--type", "text"], 65),
            (["size", "--type", "colour"], 64),
            (["size", "--type", "select"], 64),  // a select needs options
            (["size", "--type", "number", "--options", "a"], 64),
            (["size", "--type", "number", "--default", "big"], 65),
            (["link", "--type", "url", "--default", "ftp://x"], 65),
        ] {
            let r = try await run(["types", "props", "add", "Coffee"] + args + d)
            #expect(r.status == Int32(status), "\(args): \(r.stderr)")
            if status != 0 { #expect(!r.stderr.isEmpty) }
        }
        #expect(try await run(["types", "props", "add", "Nope", "x", "--type", "text"] + d).status == 65)
        var listed = array(try await run(["types", "props", "Coffee", "--json"] + d))
        #expect(listed.compactMap { $0["key"] as? String } == ["shots", "milk", "shots2"])
        #expect(listed.first?["default_value"] as? Double == 2 && listed.first?["property_type"] as? String == "number")
        let edited = try await run(
            [
                "types", "props", "edit", "Coffee", "milk", "--label", "Milk", "--options", "oat,whole,none", "--order",
                "0",
            ]
                + d)
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try await run(["types", "props", "edit", "Coffee", "milk", "--default", "soy"] + d).status == 65)
        #expect(try await run(["types", "props", "edit", "Coffee", "milk"] + d).status == 64, "nothing to change")
        #expect(try await run(["types", "props", "edit", "Coffee", "sugar", "--label", "S"] + d).status == 65)
        listed = array(try await run(["types", "props", "Coffee", "--json"] + d))
        let milk = listed.first { $0["key"] as? String == "milk" }
        #expect(milk?["label"] as? String == "Milk" && (milk?["options"] as? [String])?.count == 3)
        let removed = try await run(["types", "props", "rm", "Coffee", "shots2"] + d)
        #expect(removed.status == 0)
        #expect(try await run(["types", "props", "rm", "Coffee", "shots2"] + d).status == 65, "already gone")
        #expect(array(try await run(["types", "props", "Coffee", "--json"] + d)).count == 2)
    }

    @Test func eventsCarryTypedValuesThatAreCheckedOnEveryWrite() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        #expect(try await run(["types", "add", "Coffee"] + d).status == 0)
        #expect(
            try await run(["types", "props", "add", "Coffee", "shots", "--type", "number", "--default", "1"] + d).status
                == 0)
        #expect(
            try await run(
                ["types", "props", "add", "Coffee", "milk", "--type", "select", "--options", "oat,whole"] + d
            )
            .status == 0)
        #expect(try await run(["types", "props", "add", "Coffee", "brewed", "--type", "duration"] + d).status == 0)
        let logged = try await run(
            ["log", "Coffee", "--at", "2026-03-14T09:30:00Z", "--prop", "milk=OAT", "--prop", "brewed=4m30s"] + d)
        #expect(logged.status == 0, "\(logged.stderr)")
        for (prop, code) in [
            ("shots=two", "invalid"), ("milk=soy", "invalid"), ("sugar=1", "unknown_property"), ("shots", "invalid"),
        ] {
            let r = try await run(["log", "Coffee", "--at", "2026-03-15T09:30:00Z", "--prop", prop, "--json"] + d)
            #expect(r.status == 65, "\(prop): \(r.stderr)")
            #expect(r.stdout.contains(code) || r.stderr.contains(code), "\(prop): \(r.stdout) \(r.stderr)")
        }
        var events = array(try await run(["events", "list", "--json"] + d))
        #expect(events.count == 1, "the refused logs wrote nothing")
        let properties = events.first?["properties"] as? [String: [String: Any]]
        #expect(
            properties?["milk"]?["value"] as? String == "oat" && properties?["milk"]?["type"] as? String == "select")
        #expect(properties?["shots"]?["value"] as? Double == 1, "the default filled in")
        #expect(properties?["brewed"]?["value"] as? Double == 270)
        let id = try #require(events.first?["id"] as? String)
        let line = try await run(["events", "list"] + d).stdout
        #expect(line.contains("brewed=0:04:30") && line.contains("milk=oat") && line.contains("shots=1"), "\(line)")
        let edit = try await run(["events", "edit", id, "--prop", "shots=3", "--unset-prop", "milk"] + d)
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try await run(["events", "edit", id, "--prop", "milk=soy"] + d).status == 65)
        #expect(try await run(["events", "edit", id, "--unset-prop", "sugar"] + d).status == 65)
        #expect(try await run(["events", "edit", id, "--prop", "=3"] + d).status == 65)
        events = array(try await run(["events", "list", "--json"] + d))
        let after = events.first?["properties"] as? [String: [String: Any]]
        #expect(after?["shots"]?["value"] as? Double == 3 && after?["milk"] == nil && after?["brewed"] != nil)
        // A definition removed: the values stay on the event.
        #expect(try await run(["types", "props", "rm", "Coffee", "shots"] + d).status == 0)
        let kept =
            array(try await run(["events", "list", "--json"] + d)).first?["properties"] as? [String: [String: Any]]
        #expect(kept?["shots"]?["value"] as? Double == 3)
    }

    @Test func twoDevicesShareDefinitionsAndTheSameKeyMadeOnBothBecomesOne() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("props-a", create: false)
            let b = TemporaryDirectory("props-b", create: false)
            let email = "p\(UUID().uuidString.prefix(8))@example.com"
            try await cli.signIn("signup", email, a, server)
            try await cli.signIn("login", email, b, server)
            #expect(try await cli.trendy(["types", "add", "Coffee"], a, server).status == 0)
            #expect(try await cli.trendy(["sync"], a, server).status == 0)
            #expect(try await cli.trendy(["sync"], b, server).status == 0)
            // Both define shots before either syncs, and log with it.
            for (dir, at) in [(a, "2026-03-14T09:00:00Z"), (b, "2026-03-14T10:00:00Z")] {
                let r = try await cli.trendy(
                    ["types", "props", "add", "Coffee", "shots", "--type", "number"], dir, server)
                #expect(r.status == 0, "\(r.stderr)")
                let logged = try await cli.trendy(["log", "Coffee", "--at", at, "--prop", "shots=2"], dir, server)
                #expect(logged.status == 0, "\(logged.stderr)")
            }
            for dir in [a, b, a] {
                let r = try await cli.trendy(["sync"], dir, server)
                #expect(r.status == 0, "\(r.stderr) \(r.stdout)")
            }
            for dir in [a, b] {
                let defs = cli.json(try await cli.trendy(["types", "props", "Coffee", "--json"], dir, server))
                let list = (defs as? [[String: Any]]) ?? []
                #expect(list.count == 1 && list.first?["sync_status"] as? String == "synced", "\(list)")
                let events = try await cli.events(dir, server)
                #expect(events.count == 2)
                #expect(
                    events.allSatisfy {
                        (($0["properties"] as? [String: [String: Any]])?["shots"]?["value"] as? Double) == 2
                    }, "\(events)")
                // Nothing refused, nothing left to send (a check of one count could not see two).
                let status = try await cli.trendy(["status"], dir, server).stdout
                #expect(status.contains("Pending: 0  Failed: 0"), "\(status)")
            }
            // A label edited on b reaches a.
            #expect(
                try await cli.trendy(["types", "props", "edit", "Coffee", "shots", "--label", "Shots"], b, server)
                    .status == 0)
            #expect(try await cli.trendy(["sync"], b, server).status == 0)
            #expect(try await cli.trendy(["sync"], a, server).status == 0)
            let onA = cli.json(try await cli.trendy(["types", "props", "Coffee", "--json"], a, server))
            #expect(((onA as? [[String: Any]])?.first?["label"] as? String) == "Shots")
        }
    }
}

/// Import and export with properties (issue 33): an export imports back into another account
/// with the same values, every cell is read by its definition, and what does not fit is named.
@Suite(.timeLimit(.minutes(5)))
struct PropertyFileTests {
    let run = PropertyCLITests()

    func defined(_ d: [String]) async throws {
        #expect(try await run.run(["types", "add", "Coffee"] + d).status == 0)
        for args in [
            ["shots", "--type", "number"], ["milk", "--type", "select", "--options", "oat,whole"],
            ["brewed", "--type", "duration"], ["decaf", "--type", "boolean"], ["at", "--type", "date"],
        ] {
            #expect(try await run.run(["types", "props", "add", "Coffee"] + args + d).status == 0)
        }
    }

    @Test func anExportImportsBackIntoAnotherAccountWithTheSameValues() async throws {
        let (dirA, a) = try await PropertyCLITests.signedUp()
        let (dirB, b) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime((dirA, dirB)) {} }
        try await defined(a)
        try await defined(b)
        let props = [
            ["--prop", "shots=2", "--prop", "milk=oat", "--prop", "brewed=1:02:03", "--prop", "decaf=no"],
            ["--prop", "at=2026-03-14T09:30:00.250Z", "--prop", "shots=2.5", "--note", "a, \"quoted\"\nnote"],
            [],
        ]
        for (i, p) in props.enumerated() {
            #expect(try await run.run(["log", "Coffee", "--at", "2026-03-1\(i)T08:00:00Z"] + p + a).status == 0)
        }
        let original = run.array(try await run.run(["events", "list", "--json"] + a))
        for format in ["csv", "json"] {
            let file = dirA.path + "/export.\(format)"
            #expect(try await run.run(["export", "--format", format, "-o", file] + a).status == 0)
            let again = try await run.run(["import", file, "--json"] + a)
            #expect(again.stdout.contains("\"imported\" : 0"), "into the same account: nothing new \(again.stdout)")
            let (dirC, c) = try await PropertyCLITests.signedUp()
            defer { withExtendedLifetime(dirC) {} }
            try await defined(c)
            let imported = try await run.run(["import", file] + c)
            #expect(imported.status == 0 && imported.stderr.isEmpty, "\(format): \(imported.stderr)")
            let copy = run.array(try await run.run(["events", "list", "--json"] + c))
            func shape(_ events: [[String: Any]]) -> [String] {
                events.map { e in
                    let p = (e["properties"] as? [String: Any]).map {
                        String(
                            decoding: try! JSONSerialization.data(withJSONObject: $0, options: .sortedKeys),
                            as: UTF8.self)
                    }
                    return "\(e["timestamp"] ?? "") \(e["notes"] ?? "-") \(p ?? "{}")"
                }
            }
            #expect(shape(copy) == shape(original), "\(format)")
        }
    }

    @Test func cellsAreReadByTheirDefinitionsAndWhatDoesNotFitIsNamed() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        try await defined(d)
        let csv = dir.path + "/in.csv"
        try """
        type,timestamp,Shots,sugar,milk
        Coffee,2026-01-01T08:00:00Z,3,yes,OAT
        Coffee,2026-01-02T08:00:00Z,three,,
        Coffee,2026-01-03T08:00:00Z,,1,soy
        Coffee,2026-01-04T08:00:00Z,,2,

        """.write(toFile: csv, atomically: true, encoding: .utf8)
        let r = try await run.run(["import", csv, "--json"] + d)
        #expect(r.status == 0)
        #expect(r.stderr.contains("line 3: properties.shots") && r.stderr.contains("line 4: "), "\(r.stderr)")
        #expect(
            r.stderr.components(separatedBy: "sugar is not a property of Coffee").count == 2, "named once: \(r.stderr)")
        let events = run.array(try await run.run(["events", "list", "--json"] + d))
        #expect(events.count == 2, "the two rows that fit")
        let first = events.last?["properties"] as? [String: [String: Any]]
        #expect(first?["shots"]?["value"] as? Double == 3 && first?["milk"]?["value"] as? String == "oat")
        #expect(first?["sugar"]?["type"] as? String == "text", "kept as text, not lost")
        let json = dir.path + "/in.json"
        try #"""
        [{"type": "Coffee", "timestamp": "2026-02-01T08:00:00Z", "properties": {"shots": {"type": "text", "value": "2"}}},
         {"type": "Coffee", "timestamp": "2026-02-02T08:00:00Z", "properties": {"shots": 4, "decaf": true}},
         {"type": "Coffee", "timestamp": "2026-02-03T08:00:00Z", "properties": ["shots"]}]
        """#.write(toFile: json, atomically: true, encoding: .utf8)
        let j = try await run.run(["import", json] + d)
        #expect(j.stderr.contains("item 1: properties.shots") && j.stderr.contains("item 3: properties"), "\(j.stderr)")
        let all = run.array(try await run.run(["events", "list", "--json"] + d))
        let second = all.first?["properties"] as? [String: [String: Any]]
        #expect(second?["shots"]?["value"] as? Double == 4 && second?["decaf"]?["value"] as? Bool == true)
    }
}

extension PropertyFileTests {
    /// Found by the outside attack: keys in two cases or named like an event's columns were kept
    /// and then lost on the way back through a file; an export whose values no longer fit their
    /// definitions could not be imported back into its own account.
    @Test func keysThatAFileCannotCarryAreRefusedAndAnExportAlwaysImportsBack() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        try await defined(d)
        let json = dir.path + "/keys.json"
        try #"""
        [{"type": "Coffee", "timestamp": "2026-01-01T00:00:00Z", "properties": {"Mood": {"type": "text", "value": "a"}, "mood": {"type": "text", "value": "b"}}},
         {"type": "Coffee", "timestamp": "2026-01-02T00:00:00Z", "properties": {"notes": {"type": "text", "value": "x"}}}]
        """#.write(toFile: json, atomically: true, encoding: .utf8)
        let keys = try await run.run(["import", json] + d)
        #expect(keys.stderr.contains("item 1: ") && keys.stderr.contains("item 2: "), "\(keys.stderr)")
        #expect(run.array(try await run.run(["events", "list", "--json"] + d)).isEmpty)
        let csv = dir.path + "/twice.csv"
        try "type,timestamp,dist,DIST\nCoffee,2026-01-01T00:00:00Z,1,2\n".write(
            toFile: csv, atomically: true, encoding: .utf8)
        let twice = try await run.run(["import", csv] + d)
        #expect(twice.status == 65 && twice.stderr.contains("twice"), "\(twice.stderr)")
        // A value of the kind its definition had before: exported, then imported into the same account.
        #expect(
            try await run.run(["log", "Coffee", "--at", "2026-02-01T00:00:00Z", "--prop", "shots=3"] + d).status == 0)
        #expect(try await run.run(["types", "props", "rm", "Coffee", "shots"] + d).status == 0)
        #expect(try await run.run(["types", "props", "add", "Coffee", "shots", "--type", "boolean"] + d).status == 0)
        let file = dir.path + "/stale.csv"
        #expect(try await run.run(["export", "-o", file] + d).status == 0)
        let back = try await run.run(["import", file, "--json"] + d)
        #expect(back.stderr.isEmpty && back.stdout.contains("\"duplicates\" : 1"), "\(back.stdout) \(back.stderr)")
    }
}

extension PropertyFileTests {
    /// `events list --property key=value`: each read by the key's definition (a select's option
    /// in any case, numbers as numbers, yes/no), with the other filters and the text search.
    @Test func eventsAreFoundByTheirValues() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        try await defined(d)
        for (i, props) in [
            ["milk=oat", "shots=2", "decaf=yes"], ["milk=whole", "shots=2", "decaf=no"], ["milk=oat", "shots=3"],
        ].enumerated() {
            let args =
                props.flatMap { ["--prop", $0] } + ["--note", "cup \(i)", "--at", "2026-04-0\(i + 1)T08:00:00Z"]
            #expect(try await run.run(["log", "Coffee"] + args + d).status == 0)
        }
        func notes(_ args: [String]) async throws -> [String] {
            let r = try await run.run(["events", "list", "--json"] + args + d)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return run.array(r).compactMap { $0["notes"] as? String }
        }
        #expect(try await notes(["--property", "milk=OAT"]) == ["cup 2", "cup 0"])
        #expect(try await notes(["--property", "shots=2.0", "--property", "milk=whole"]) == ["cup 1"])
        #expect(try await notes(["--property", "decaf=no"]) == ["cup 1"])
        #expect(try await notes(["--property", "milk=oat", "--text", "cup 2", "--type", "Coffee"]) == ["cup 2"])
        #expect(try await notes(["--property", "sugar=1"]).isEmpty, "a key no type has: as text, nothing holds it")
        #expect(try await run.run(["events", "list", "--property", "shots=two"] + d).status == 65)
        #expect(try await run.run(["events", "list", "--property", "=2"] + d).status == 65)
    }
}

extension PropertyFileTests {
    /// An export reads a page after the last one (keyset, not an offset): every event once, also
    /// events of several types at one time across a page's edge.
    @Test func anExportOfManyPagesHoldsEveryEventOnce() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        var csv = "type,timestamp,notes\n"
        for i in 0..<1_250 {
            for type in ["A", "B"] {
                csv +=
                    "\(type),2026-01-01T\(String(format: "%02d:%02d", i / 60 % 24, i % 60)):0\(i / 1_440)Z,n\(i)\(type)\n"
            }
        }
        let file = dir.path + "/many.csv"
        try csv.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await run.run(["import", file] + d).status == 0)
        let out = dir.path + "/out.csv"
        #expect(try await run.run(["export", "-o", out] + d).status == 0)
        let rows = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(rows.count == 2_500 && Set(rows).count == 2_500)
    }
}

extension PropertyFileTests {
    /// Found by the second outside attack: a short word's search (the walk of the time index)
    /// lowercased the word but not the text beyond ASCII, so "Σ" found nothing, even as written;
    /// a 50,001-character word was a raw SQLite error; a place's name and position did not go
    /// through a CSV file.
    @Test func searchFindsLettersAsWrittenAndPlacesGoThroughAFile() async throws {
        let (dir, d) = try await PropertyCLITests.signedUp()
        defer { withExtendedLifetime(dir) {} }
        #expect(try await run.run(["types", "add", "Trip"] + d).status == 0)
        #expect(
            try await run.run(["log", "Trip", "--note", "ΣΊΣΥΦΟΣ in İstanbul", "--at", "2026-01-01T00:00:00Z"] + d)
                .status
                == 0)
        for word in ["Σ", "ΣΊ", "İs", "ΣΥΦΟΣ", "STANBUL"] {
            let r = try await run.run(["events", "list", "--text", word] + d)
            #expect(r.stdout.contains("ΣΊΣΥΦΟΣ"), "\(word): \(r.stdout)")
        }
        let long = try await run.run(["events", "list", "--text", String(repeating: "a", count: 50_001)] + d)
        #expect(long.status == 0 && long.stdout.contains("No events"), "\(long.stderr)")
        let csv = dir.path + "/places.csv"
        try "type,timestamp,location_name,latitude,longitude\nTrip,2026-02-01T00:00:00Z,Blue Bottle,37.7,-122.4\n"
            .write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(try await run.run(["import", csv] + d).status == 0)
        #expect(try await run.run(["events", "list", "--text", "bottle"] + d).stdout.contains("2026-02-01"))
        let out = dir.path + "/out.csv"
        #expect(try await run.run(["export", "-o", out] + d).status == 0)
        let exported = try String(contentsOfFile: out, encoding: .utf8)
        #expect(exported.contains("Blue Bottle,37.7,-122.4"), "\(exported)")
        let bad = dir.path + "/half.csv"
        try "type,timestamp,latitude\nTrip,2026-02-02T00:00:00Z,37.7\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        #expect(try await run.run(["import", bad] + d).stderr.contains("latitude and longitude go together"))
    }
}
