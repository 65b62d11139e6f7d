import Foundation

/// Runs the real `trendy` binary (built next to the test bundle) and captures its output.
struct TrendyProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["TRENDY_BIN"] { return URL(fileURLWithPath: path) }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The test bundle lives in .build/<triple>/debug; on some layouts one level deeper.
        for dir in [here, here.deletingLastPathComponent()] {
            let candidate = dir.appendingPathComponent("trendy")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return here.appendingPathComponent("trendy")
    }

    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "TRENDY_DATA_DIR")
        env.removeValue(forKey: "TRENDY_LOG_LEVEL")
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A temporary data directory removed when the test ends.
final class TemporaryDataDirectory: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("trendy-it-\(UUID().uuidString)")
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    var path: String { url.path }
}
