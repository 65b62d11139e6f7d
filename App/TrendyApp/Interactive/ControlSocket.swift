import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running app's control socket: a Unix-domain socket in the data directory (`app.sock`,
/// owner-only), one request per connection. `trendy open` hands it a deep link, `trendy location
/// set|replay` a move of the simulated device, so the running app — the one monitor — handles
/// them instead of a second process racing it.
///
/// The exchange: the client sends `by <ms since 1970> <request>` and a line break; the app answers
/// `taken` at once if it read the request by that deadline (else a refusal, and nothing is done),
/// then the request's answer. A client that hears no `taken` by the deadline (and a margin) says
/// the app is not answering — suspended with Ctrl-Z, say — and gives up, knowing that the app,
/// once it runs again, refuses the late request (`trendy open` used to hang while the app was
/// suspended, and the link, given up with Ctrl-C, still opened after `fg`). A request without its
/// line break is not one (a partial line used to run when the read deadline cut it).
final class ControlServer: @unchecked Sendable {
    let path: String
    let fd: Int32

    /// Why the socket could not be opened: the path does not fit a socket address, or the
    /// system refused.
    struct Unavailable: Error, CustomStringConvertible {
        let why: String
        var description: String { "no control socket: \(why)" }
    }

    /// Listens at `url`; each line received goes to `handler` with a function for the one-line
    /// answer. The caller is the only app for this data directory (it holds `app.lock`), so a
    /// socket file already there was left by an app that died and is replaced.
    init(at url: URL, handler: @escaping @Sendable (String, @escaping @Sendable (String) -> Void) -> Void) throws {
        path = url.path
        guard path.utf8.count < 104 else { throw Unavailable(why: "the data directory's path is too long") }
        unlink(path)
        #if canImport(Glibc)
            let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let socketFD = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard socketFD >= 0 else { throw Unavailable(why: String(cString: strerror(errno))) }
        var address = Self.address(path)
        // Owner-only from the start: the socket file is created under this mask.
        let mask = umask(0o077)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(mask)
        guard bound == 0, listen(socketFD, 8) == 0 else {
            let why = String(cString: strerror(errno))
            close(socketFD)
            throw Unavailable(why: why)
        }
        chmod(path, 0o600)
        fd = socketFD
        Thread.detachNewThread {
            while true {
                let client = accept(socketFD, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                // Each connection on its own thread with a short read deadline: a client that
                // connects and sends nothing neither blocks the others nor lingers.
                var deadline = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &deadline, socklen_t(MemoryLayout<timeval>.size))
                Thread.detachNewThread {
                    guard let line = Self.readLine(client, whole: true) else {
                        close(client)
                        return
                    }
                    switch ControlDeadline.take(line, now: Date()) {
                    case .failure(let refusal):
                        Self.writeAll(client, ControlReply.refused(refusal.reason).line + "\n")
                        close(client)
                        return
                    case .success(let request):
                        Self.writeAll(client, ControlDeadline.taken + "\n")
                        handler(request) { answer in
                            Self.writeAll(client, answer + "\n")
                            close(client)
                        }
                    }
                }
            }
        }
    }

    /// Stops listening and removes the socket file.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// One line (at most 16 KiB) from `fd`, without its line break; `whole`: nil unless the
    /// line break came (a request cut by the read deadline is not run).
    static func readLine(_ fd: Int32, whole: Bool = false) -> String? {
        var data: [UInt8] = []
        var byte: UInt8 = 0
        while data.count < 16_384 {
            let n = read(fd, &byte, 1)
            if n < 0, errno == EINTR { continue }
            guard n == 1 else { break }
            if byte == 0x0A { return String(decoding: data, as: UTF8.self) }
            data.append(byte)
        }
        return data.isEmpty || whole ? nil : String(decoding: data, as: UTF8.self)
    }

    /// Writes `text` to the socket `fd`. A peer that has gone (a sender that gave up) is no
    /// signal: without `MSG_NOSIGNAL` the write raised SIGPIPE, which ended the app.
    static func writeAll(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// The other end: what `trendy open` and `trendy location` use to reach a running app.
enum ControlClient {
    /// Sends `request` to the app listening at `url` and returns its reply; nil when no app
    /// listens there (no socket, or a socket left by an app that died). An app that does not take
    /// the request within ``ControlDeadline/wait`` (suspended, stopped) is not answering: the reply
    /// says so, and the app will refuse the request if it reads it later.
    static func send(_ request: ControlRequest, to url: URL, timeout: Double = 120) -> ControlReply? {
        let deadline = Date().addingTimeInterval(ControlDeadline.wait)
        guard let answer = send(ControlDeadline.stamp(request.line, by: deadline), to: url, timeout: timeout) else {
            return nil
        }
        switch answer {
        case .notTaken:
            return .unanswered(
                "the app did not take it within \(Int(ControlDeadline.wait)) s; is it suspended? Run fg in its "
                    + "terminal and try again (nothing was done)")
        case .answered(let line):
            return ControlReply(line: line) ?? .refused("an answer this program does not read: \(line)")
        }
    }

    /// What came back for a request.
    enum Answer: Equatable {
        /// No `taken` in time.
        case notTaken
        /// The request's answer (empty when the app closed without one).
        case answered(String)
    }

    /// Sends one line and returns the answer; nil when nobody listens.
    static func send(_ line: String, to url: URL, timeout: Double) -> Answer? {
        let path = url.path
        guard path.utf8.count < 104, FileManager.default.fileExists(atPath: path) else { return nil }
        #if canImport(Glibc)
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        setReadTimeout(fd, ControlDeadline.wait + ControlDeadline.margin)
        var address = ControlServer.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return nil }
        ControlServer.writeAll(fd, line + "\n")
        guard let first = ControlServer.readLine(fd, whole: true) else { return .notTaken }
        guard first == ControlDeadline.taken else { return .answered(first) }
        setReadTimeout(fd, timeout)
        return .answered(ControlServer.readLine(fd) ?? "")
    }

    static func setReadTimeout(_ fd: Int32, _ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}
