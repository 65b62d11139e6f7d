import Foundation

/// Processes that keep a core busy each (`sh -c 'while :; do :; done'` at normal priority) for
/// as long as the benchmarks run: `trendy-bench --busy` measures every figure on a machine that is
/// not idle, as a phone never is. Stopped (SIGKILL) by ``stop()``, or with the benchmark's process
/// group when it is interrupted.
final class BusyLoad: Sendable {
    let pids: [Int32]

    init(processes: Int) throws {
        var pids: [Int32] = []
        for _ in 0..<processes {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            try process.run()
            pids.append(process.processIdentifier)
        }
        self.pids = pids
    }

    /// Ends the load.
    func stop() {
        for pid in pids { kill(pid, SIGKILL) }
    }
}
