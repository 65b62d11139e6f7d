import Foundation
import Testing
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels

@Suite struct GPXTrackTests {
    func parse(_ text: String) throws(GPXError) -> [LocationFix] { try GPXTrack.parse(Array(text.utf8)) }

    func error(_ text: String) -> GPXError? {
        do {
            _ = try parse(text)
            return nil
        } catch { return error }
    }

    let valid = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- recorded on a walk -->
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
          <metadata><name>Walk &amp; talk</name></metadata>
          <trk><name><![CDATA[Morning <loop>]]></name>
            <trkseg>
              <trkpt lat="52.5200" lon="13.4050"><ele>34</ele><time>2026-11-22T08:00:00Z</time></trkpt>
              <trkpt lat='52.5210' lon='13.4060'><time>2026-11-22T08:01:00.500Z</time></trkpt>
              <trkpt lat="52.5220" lon="13.4070"/>
            </trkseg>
          </trk>
          <wpt lat="-33.9" lon="151.2"><name>Sydney</name></wpt>
        </gpx>
        """

    @Test func readsPointsInOrderWithTheirTimes() throws {
        let fixes = try parse(valid)
        #expect(fixes.count == 4)
        #expect(fixes[0].coordinate == Coordinate(latitude: 52.52, longitude: 13.405))
        #expect(fixes[0].time == ISO8601.parse("2026-11-22T08:00:00Z"))
        #expect(fixes[1].time == ISO8601.parse("2026-11-22T08:01:00.500Z"))
        #expect(fixes[2].time == nil)
        #expect(fixes[3].coordinate.latitude == -33.9)
    }

    @Test func namespacedElementsAndAByteOrderMarkAreFine() throws {
        let text =
            "\u{FEFF}<g:gpx xmlns:g=\"x\"><g:trk><g:trkseg><g:trkpt lat=\"1\" lon=\"2\"/></g:trkseg></g:trk></g:gpx>"
        #expect(try parse(text).count == 1)
    }

    @Test(
        arguments: [
            ("<gpx><trk><trkseg>\n<trkpt lon=\"13\"/></trkseg></trk></gpx>", 2, "trkpt", "missing the lat attribute"),
            ("<gpx>\n\n<trkpt lat=\"abc\" lon=\"13\"/></gpx>", 3, "trkpt", "lat \"abc\" is not a latitude"),
            ("<gpx><trkpt lat=\"91\" lon=\"13\"/></gpx>", 1, "trkpt", "between -90 and 90"),
            ("<gpx><trkpt lat=\"1\" lon=\"-181\"/></gpx>", 1, "trkpt", "longitude"),
            ("<gpx><trkpt lat=\"1\" lon=\"nan\"/></gpx>", 1, "trkpt", "longitude"),
            ("<gpx>\n<trkpt lat=\"1\" lon=\"2\">\n<time>yesterday</time></trkpt></gpx>", 3, "time", "ISO 8601"),
            ("<gpx><trk>\n<trkseg></trk></gpx>", 2, "trk", "expected </trkseg>, found </trk>"),
            ("<gpx><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"/>", 2, "trkseg", "ends before </trkseg>"),
            ("<kml><Placemark/></kml>", 1, "kml", "not a GPX file"),
            ("<gpx></gpx>", 1, nil, "no track points"),
            ("", 1, nil, "not a GPX file"),
            ("<gpx><trkpt lat=\"1\" lon=\"2\"/></gpx><gpx/>", 1, "gpx", "second root"),
            ("<gpx>\n<!-- never closed", 2, nil, "unterminated comment"),
            ("<gpx><trkpt lat=\"1 lon=\"2\"/></gpx>", 1, "trkpt", "attribute"),
            ("<gpx><trkpt lat=1 lon=\"2\"/></gpx>", 1, "trkpt", "not quoted"),
            ("<gpx><name>&bogus;</name></gpx>", 1, nil, "unknown entity"),
            ("junk<gpx/>", 1, nil, "text outside"),
            (
                "<gpx><trkpt lat=\"1\" lon=\"2\"><trkpt lat=\"1\" lon=\"2\"/></trkpt></gpx>", 1, "trkpt",
                "point inside a point"
            ),
        ] as [(String, Int, String?, String)])
    func malformedFilesSayWhereAndWhat(text: String, line: Int, element: String?, message: String) {
        let e = error(text)
        #expect(e != nil, "accepted: \(text)")
        #expect(e?.line == line, "\(String(describing: e))")
        #expect(e?.element == element, "\(String(describing: e))")
        #expect(e?.message.contains(message) == true, "\(String(describing: e))")
    }

    @Test func randomDamageNeverCrashes() {
        var rng = SeededRandom(propertySeed: 42)
        let base = Array(valid.utf8)
        let alphabet = Array("<>/=\"'&;![]?-: \nabcgpxtrkpt0123456789.".utf8)
        var accepted = 0
        for _ in 0..<3_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                default: bytes = Array(bytes[0..<at])
                }
                if bytes.isEmpty { break }
            }
            do {
                let fixes = try GPXTrack.parse(bytes)
                accepted += 1
                for f in fixes { #expect((try? f.coordinate.validate()) != nil) }
            } catch {
                #expect(error.line >= 1)
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted > 0)
    }
}
