import Foundation

/// The log files of one install: listing, tail and the bug-report export.
public struct LogDirectory: Sendable {
    /// The folder holding the files.
    public let directory: URL
    let baseName: String
    let redactor: Redactor

    /// Creates a view of `directory`.
    public init(directory: URL, baseName: String = "trendy", redactor: Redactor = Redactor()) {
        self.directory = directory
        self.baseName = baseName
        self.redactor = redactor
    }

    /// The active file's location.
    public var activeFile: URL { directory.appendingPathComponent("\(baseName).log") }

    /// Rotated files, oldest first (their names sort by rotation time).
    public func rotatedFiles() -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix("\(baseName)-") && $0.hasSuffix(".log") }
            .sorted()
            .map { directory.appendingPathComponent($0) }
    }

    /// Every log file, oldest first, the active one last.
    public func files() -> [URL] {
        var all = rotatedFiles()
        if FileManager.default.fileExists(atPath: activeFile.path) { all.append(activeFile) }
        return all
    }

    /// The last `count` lines across the files, oldest first, redacted again.
    public func tail(_ count: Int) throws -> [String] {
        guard count > 0 else { return [] }
        var lines: [String] = []
        for file in files().reversed() {
            let text = try String(contentsOf: file, encoding: .utf8)
            var fileLines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            if fileLines.count > count - lines.count { fileLines = Array(fileLines.suffix(count - lines.count)) }
            lines = fileLines + lines
            if lines.count >= count { break }
        }
        return lines.map(redactor.scrub)
    }

    /// What ``export(to:appVersion:)`` wrote.
    public struct ExportSummary: Sendable, Equatable {
        /// The bundle written.
        public var destination: URL
        /// How many log files it holds.
        public var fileCount: Int
        /// Its size in bytes.
        public var byteCount: Int
    }

    /// Writes every log file, redacted line by line once more, into one text bundle for a bug
    /// report. The bundle is written atomically with owner-only permissions.
    public func export(to destination: URL, appVersion: String, now: Date = Date()) throws -> ExportSummary {
        let sources = files()
        var out = "# Trendy log export\n# app_version: \(appVersion)\n"
        out += "# created: \(LogRenderer.timestamp(now))\n# files: \(sources.count)\n"
        for file in sources {
            let data = try Data(contentsOf: file)
            let text = String(decoding: data, as: UTF8.self)
            out += "\n===== \(file.lastPathComponent) (\(data.count) bytes) =====\n"
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.last?.isEmpty == true { lines.removeLast() }
            for line in lines {
                out += redactor.scrub(String(line))
                out += "\n"
            }
        }
        let bytes = Data(out.utf8)
        let parent = destination.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let temporary = parent.appendingPathComponent(".\(destination.lastPathComponent).\(getpid()).tmp")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: bytes, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: destination.path])
        }
        if Foundation.rename(temporary.path, destination.path) != 0 {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return ExportSummary(destination: destination, fileCount: sources.count, byteCount: bytes.count)
    }
}
