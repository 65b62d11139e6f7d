import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

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

    /// Runs the binary and waits for it on the calling thread: only for a thread of its own (see
    /// `run`), never on the cooperative pool, whose two threads on this machine are every test's.
    private static func runBlocking(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil
    ) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "TRENDY_DATA_DIR")
        env.removeValue(forKey: "TRENDY_LOG_LEVEL")
        env = testEnvironment(env)
        for (k, v) in environment { env[k] = v }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        let process = try ChildProcess(
            binary, arguments, environment: env, stdin: .pipe(input), stdout: .pipe(out), stderr: .pipe(err))
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Both streams at once: a child that fills one pipe while the other is read would wait forever.
        let errData = Mutex(Data())
        let errDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = data }
            errDone.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errDone.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }
}

extension TrendyProcess {
    /// The environment every spawned `trendy` gets: a generous server budget (15 s) unless the
    /// test or the caller's environment names one. Timing is not what these tests check: on a
    /// busy machine (the suite's own parallel tests, a CI neighbour) a test server on loopback can
    /// take longer than the 2 s default to answer, and the binary would judge it offline. A test
    /// about the budget passes `TRENDY_SERVER_TIMEOUT` or `--server-timeout` itself; a refused
    /// connection fails at once whatever the budget.
    static func testEnvironment(_ base: [String: String]) -> [String: String] {
        var env = base
        if env["TRENDY_SERVER_TIMEOUT"] == nil { env["TRENDY_SERVER_TIMEOUT"] = "15" }
        return env
    }
}

extension TrendyProcess {
    /// Runs the binary and waits for it on a thread of its own, so the test process's cooperative
    /// threads (one per core) keep running every other test, its servers and its timers while the
    /// child runs. A blocking wait here starved the pool for 20 s on a 2-core CI machine, and a
    /// probe's 400 ms timer answered after 20 s.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    continuation.resume(returning: try runBlocking(arguments, environment: environment, stdin: stdin))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

extension TrendyProcess {
    /// Starts the binary with `arguments` and kills it with SIGKILL after `delay`.
    static func killed(_ arguments: [String], after delay: Duration) async throws {
        let process = try ChildProcess(
            binary, arguments, environment: testEnvironment(ProcessInfo.processInfo.environment))
        try await Task.sleep(for: delay)
        process.send(SIGKILL)
        process.waitUntilExit()
    }
}

/// A small HTTP helper for tests that poke the server directly.
enum RawHTTP {
    static func post(_ url: String, json: String) async throws -> String {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        try await http.shutdown()
        return String(buffer: body)
    }
}
