import Foundation
import Testing

@testable import TrendyServer

/// The spelling idempotency keys compare bodies in: the same value however it is written, a
/// different value never; not JSON (or hostile nesting) is left to a byte comparison.
@Suite struct CanonicalJSONTests {
    func canonical(_ text: String) -> String? {
        CanonicalJSON.canonical(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func oneSpellingPerValue() {
        let spellings = [
            #"{"b":[1,2.5e3,{"z":null,"a":true}],"a":"é\n"}"#,
            "{ \"a\" : \"\\u00e9\\n\" ,\n\t\"b\": [ 1 , 2.5e3 , { \"a\" : true , \"z\" : null } ] }",
            #"{"a":"\u00E9\u000a","b":[1,2.5e3,{"a":true,"z":null}]}"#,
        ]
        let expected = #"{"a":"é\u000a","b":[1,2.5e3,{"a":true,"z":null}]}"#
        for text in spellings { #expect(canonical(text) == expected, "\(text)") }
        #expect(canonical(#"{"s":"\ud83d\ude00 \/ \"q\""}"#) == #"{"s":"😀 / \"q\""}"#)
        #expect(canonical("[]") == "[]" && canonical(" {} ") == "{}")
    }

    @Test func differentValuesStayDifferent() {
        #expect(canonical(#"{"a":1}"#) != canonical(#"{"a":2}"#))
        #expect(canonical(#"{"a":"x"}"#) != canonical(#"{"a":"X"}"#))
        #expect(canonical(#"[1,2]"#) != canonical(#"[2,1]"#))
        #expect(canonical(#"{"a":null}"#) != canonical("{}"))
    }

    @Test func notJSONIsNil() {
        for text in [
            "", "{", #"{"a":}"#, "[1,]", "01x", "tru", #""unterminated"#, #"{"a":1} trailing"#, "\"\u{01}\"",
            #""\ud800""#, #""\x""#, "-", "1.", "1e",
        ] {
            #expect(canonical(text) == nil, "\(text)")
        }
    }

    @Test func hostileNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(canonical(deep) == nil)
        let fine = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(canonical(fine) == fine)
    }

    /// A real batch in two key orders: one spelling (the speed is a benchmark figure, in
    /// docs/performance.md).
    @Test func twoEncodingsOfARealBatchAgree() throws {
        var events: [[String: Any]] = []
        for i in 0..<500 {
            events.append([
                "id": UUID().uuidString.lowercased(), "timestamp": "2025-01-01T00:00:\(i % 60).000Z",
                "notes": "bench \(i) \u{1F600} \"quoted\"", "source_type": "imported", "properties": ["k": i],
            ])
        }
        let body = try JSONSerialization.data(withJSONObject: ["events": events])
        let reordered = try JSONSerialization.data(withJSONObject: ["events": events], options: [.sortedKeys])
        #expect(CanonicalJSON.canonical(Array(body)) == CanonicalJSON.canonical(Array(reordered)))
        #expect(CanonicalJSON.canonical(Array(body)) != nil)
    }
}
