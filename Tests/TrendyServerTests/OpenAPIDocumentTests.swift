import Foundation
import Testing
import TrendyLogging
import TrendyServer

/// docs/api/openapi.yaml must describe every route the server registers.
struct OpenAPIDocumentTests {
    static var documentURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/api/openapi.yaml")
    }

    /// `(METHOD, path)` pairs read from the `paths:` section (two-space path keys, four-space methods).
    static func documentedRoutes(_ text: String) -> Set<String> {
        var routes: Set<String> = []
        var inPaths = false
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("paths:") {
                inPaths = true
                continue
            }
            if inPaths, let first = line.first, !first.isWhitespace { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                current = String(line.dropFirst(2).dropLast())
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) { routes.insert("\(method) \(current)") }
            }
        }
        return routes
    }

    @Test func everyRegisteredRouteIsDocumented() async throws {
        let text = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let documented = Self.documentedRoutes(text)
        let server = try await TrendyServer(configuration: .testing(), logs: LogSystem.disabled())
        let registered = Set(server.routes.map(\.description))
        #expect(registered.count > 20)
        #expect(registered.subtracting(documented).sorted() == [], "missing from openapi.yaml")
        #expect(documented.subtracting(registered).sorted() == [], "documented but not served")
    }
}
