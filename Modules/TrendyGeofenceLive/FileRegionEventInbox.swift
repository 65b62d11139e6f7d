import Foundation
import Logging
import TrendyFiles
import TrendyGeofence
import TrendyModels

/// ``RegionEventInbox`` as a directory with one owner-only file per crossing, written atomically
/// and `fsync`ed (file and directory) before ``append(_:)`` returns. One file each means two
/// background launches at once never contend for a lock or tear each other's writes.
public struct FileRegionEventInbox: RegionEventInbox {
    /// The inbox folder.
    public let directory: URL
    let logger: Logger

    /// Uses `directory` (created 0700 on the first append).
    public init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    static let limit = 64 * 1024

    public func append(_ crossing: RegionCrossing) throws {
        let data = try TrendyJSON.encoder().encode(crossing)
        let millis = max(0, Int64((crossing.occurredAt.timeIntervalSince1970 * 1000).rounded()))
        let name = String(format: "%015lld-%@.json", millis, Self.safe(crossing.id))
        try OwnerOnlyFile.write(data, to: directory.appendingPathComponent(name))
        // The rename is durable only once the directory itself is synced.
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// Keeps ids usable as file names.
    static func safe(_ id: String) -> String {
        String(id.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" ? Character($0) : "_" })
    }

    func files() throws -> [URL] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
            if !FileManager.default.fileExists(atPath: directory.path) { return [] }
            throw error
        }
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().map {
            directory.appendingPathComponent($0)
        }
    }

    /// An unreadable entry is renamed `*.corrupt`
    /// (kept for a bug report) and skipped.
    public func pending() throws -> [RegionCrossing] {
        var out: [(RegionCrossing, String)] = []
        for file in try files() {
            do {
                guard let bytes = try OwnerOnlyFile.read(file, limit: Self.limit) else { continue }
                let crossing = try TrendyJSON.decoder().decode(RegionCrossing.self, from: Data(bytes))
                out.append((crossing, file.lastPathComponent))
            } catch {
                logger.error(
                    "Unreadable captured crossing set aside",
                    metadata: ["file": .string(file.lastPathComponent), "error": .string(String(describing: error))])
                _ = rename(file.path, file.path + ".corrupt")
            }
        }
        return out.sorted { ($0.0.occurredAt, $0.1) < ($1.0.occurredAt, $1.1) }.map(\.0)
    }

    public func remove(id: String) throws {
        let suffix = "-\(Self.safe(id)).json"
        for file in try files() where file.lastPathComponent.hasSuffix(suffix) {
            try OwnerOnlyFile.remove(file)
        }
    }
}
