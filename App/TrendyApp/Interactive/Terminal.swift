import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key the app reacts to.
enum Key: Equatable, Sendable {
    case char(Character)
    case enter
    case escape
    case backspace
    case up
    case down
    case left
    case right
    /// Text pasted in one go (bracketed paste): it goes into a field as text, never as keys (a
    /// pasted line break committed a note, and the "dy" after it deleted the event).
    case paste(String)

    /// The keys in `bytes` typed on a terminal in raw mode (arrows as escape sequences).
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case 0x1B:
                if i + 2 < bytes.count, bytes[i + 1] == 0x5B {
                    // Shift-Tab (ESC [ Z) is the field before, as ↑ (it was Esc, and the form closed).
                    let arrows: [UInt8: Key] = [0x41: .up, 0x42: .down, 0x43: .right, 0x44: .left, 0x5A: .up]
                    if let arrow = arrows[bytes[i + 2]] {
                        keys.append(arrow)
                        i += 3
                        continue
                    }
                }
                keys.append(.escape)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x20..<0x7F: keys.append(.char(Character(UnicodeScalar(b))))
            default:
                // A UTF-8 sequence: decode it whole.
                let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
                let end = min(bytes.count, i + length)
                if let text = String(bytes: bytes[i..<end], encoding: .utf8), let c = text.first {
                    keys.append(.char(c))
                }
                i = end
                continue
            }
            i += 1
        }
        return keys
    }

    /// The keys one line of a script stands for (line mode, stdin not a terminal): special keys
    /// as `<enter>`, `<esc>`, `<bs>`, `<up>`, `<down>`, `<left>`, `<right>`; every other
    /// character typed as it is. The line break itself is not a key.
    static func script(_ line: Substring) -> [Key] {
        let names: [String: Key] = [
            "enter": .enter, "esc": .escape, "bs": .backspace, "up": .up, "down": .down, "left": .left,
            "right": .right,
        ]
        var keys: [Key] = []
        var rest = line[...]
        while let c = rest.first {
            if c == "<", let close = rest.firstIndex(of: ">"),
                let key = names[String(rest[rest.index(after: rest.startIndex)..<close])]
            {
                keys.append(key)
                rest = rest[rest.index(after: close)...]
                continue
            }
            keys.append(.char(c))
            rest = rest.dropFirst()
        }
        return keys
    }
}

/// The terminal the app draws on: full-screen on a TTY (alternate screen, raw input, redraw in
/// place, size from the terminal), or frames one after another when output is not a terminal
/// (scripts, tests). Restores the terminal as it found it.
final class Terminal: @unchecked Sendable {
    /// Whether stdout is a terminal (full-screen) or not (line-mode frames).
    let fullScreen: Bool
    /// Whether stdin is a terminal (raw keys) or a script (one line of keys at a time).
    let rawInput: Bool
    private let lock = NSLock()
    private var saved: termios?
    private var active = false
    private var lastDrawn: [String] = []
    /// Standard error while the screen is ours (it went to /dev/null meanwhile).
    private var savedStderr: Int32 = -1
    /// The alternate screen, the cursor hidden, bracketed paste on, cleared.
    static let takeScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?2004h\u{1B}[H\u{1B}[2J"

    init(fullScreen: Bool? = nil, rawInput: Bool? = nil) {
        self.fullScreen = fullScreen ?? (isatty(STDOUT_FILENO) == 1)
        self.rawInput = rawInput ?? (isatty(STDIN_FILENO) == 1)
    }

    /// Rows and columns (24×80 when unknown).
    var size: (rows: Int, columns: Int) {
        var w = winsize()
        guard fullScreen, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &w) == 0, w.ws_row > 0, w.ws_col > 0 else {
            return (24, 80)
        }
        return (Int(w.ws_row), Int(w.ws_col))
    }

    /// Takes the terminal: raw input (signals still on: Ctrl-C, Ctrl-Z work), alternate screen,
    /// hidden cursor.
    func enter() {
        lock.lock()
        defer { lock.unlock() }
        guard !active else { return }
        active = true
        if rawInput {
            var t = termios()
            if tcgetattr(STDIN_FILENO, &t) == 0 {
                saved = t
                makeRaw()
            }
        }
        if fullScreen { write(Self.takeScreen) }
        if fullScreen, isatty(STDERR_FILENO) == 1, savedStderr < 0 {
            // A line written to standard error (a log line, a library's warning) landed across the
            // full-screen UI and stayed there; the log files keep every one.
            savedStderr = dup(STDERR_FILENO)
            let null = open("/dev/null", O_WRONLY)
            if null >= 0 {
                dup2(null, STDERR_FILENO)
                close(null)
            }
        }
        lastDrawn = []
    }

    /// Raw input from the saved settings (signals still on).
    private func makeRaw() {
        guard var t = saved else { return }
        t.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &t)
    }

    /// Gives the terminal back as it was: main screen, cursor, cooked input.
    func leave() {
        lock.lock()
        defer { lock.unlock() }
        guard active else { return }
        active = false
        if fullScreen { write("\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l") }
        if savedStderr >= 0 {
            dup2(savedStderr, STDERR_FILENO)
            close(savedStderr)
            savedStderr = -1
        }
        if var t = saved { tcsetattr(STDIN_FILENO, TCSANOW, &t) }
    }

    /// Draws `frame`: in place on a TTY (only lines that changed; cut to the terminal's size),
    /// else as a frame block on its own.
    func draw(_ frame: Frame, plain: Bool) {
        lock.lock()
        defer { lock.unlock() }
        guard fullScreen else {
            printFrame(frame, plain: plain)
            fflush(nil)
            return
        }
        guard active else { return }
        let (rows, columns) = size
        // Long lines wrap (a question lost its "y: yes", the tabs past 5 at 50 columns); then the
        // frame fits the window's height.
        let lines = Self.fit(
            frame.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init), rows: rows,
            columns: columns)
        var out = ""
        for (row, line) in lines.enumerated() where row >= lastDrawn.count || lastDrawn[row] != line {
            out += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[K"
        }
        if lines.count < lastDrawn.count { out += "\u{1B}[\(lines.count + 1);1H\u{1B}[J" }
        lastDrawn = Array(lines)
        write(out)
    }

    /// The longest start of `line` that fits `columns` terminal cells: wide characters (CJK,
    /// most emoji) take two, combining marks none.
    static func fitting(_ line: String, columns: Int) -> String {
        var width = 0
        var out = ""
        for character in line {
            let w = cells(character)
            guard width + w <= columns else { break }
            width += w
            out.append(character)
        }
        return out
    }

    /// How many cells `character` takes on a terminal.
    static func cells(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let v = scalar.value
        if scalar.properties.generalCategory == .nonspacingMark { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// Forgets what is on screen (after a resize or a return from the background): the next draw
    /// repaints everything.
    func invalidate() {
        lock.lock()
        defer { lock.unlock() }
        lastDrawn = []
        guard active else { return }
        // Stopped from outside (SIGSTOP) and continued, the shell had put the terminal back in
        // line mode: raw input and the app's screen are taken again (keys were echoed and
        // ignored until Enter).
        if rawInput { makeRaw() }
        if fullScreen { write(Self.takeScreen) }
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                    let n = Glibc.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                #else
                    let n = Darwin.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                #endif
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// The keys typed, as they arrive; ends when input ends (EOF).
    func keys() -> AsyncStream<Key> {
        let (stream, continuation) = AsyncStream.makeStream(of: Key.self)
        let raw = rawInput
        let thread = Thread {
            var paste = PasteReader()
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = read(STDIN_FILENO, &buffer, buffer.count)
                if n < 0, errno == EINTR { continue }
                // A background job (`bg`) reading its terminal gets EIO: wait to be in front again.
                if n < 0, errno == EIO, raw {
                    usleep(100_000)
                    continue
                }
                guard n > 0 else { break }
                if raw {
                    for key in paste.feed(Array(buffer[0..<n])) { continuation.yield(key) }
                    continue
                }
                pending += buffer[0..<n]
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    for key in Key.script(Substring(line.trimmingCharacters(in: .init(charactersIn: "\r")))) {
                        continuation.yield(key)
                    }
                }
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

/// Raw input bytes to keys, a bracketed paste (`ESC [200~ … ESC [201~`) as one ``Key/paste(_:)``,
/// however the reads cut it.
struct PasteReader {
    static let start: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x30, 0x7E]
    static let end: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]
    /// The paste so far, while one is open.
    var pasted: [UInt8]?
    /// Bytes held back: they may begin a marker the next read completes.
    var held: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [Key] {
        var rest = held + bytes
        held = []
        var keys: [Key] = []
        while !rest.isEmpty {
            if var text = pasted {
                if let at = Self.find(Self.end, in: rest) {
                    text += rest[..<at]
                    keys.append(.paste(String(decoding: text, as: UTF8.self)))
                    pasted = nil
                    rest = Array(rest[(at + Self.end.count)...])
                } else {
                    let keep = Self.partialSuffix(Self.end, of: rest)
                    pasted = text + rest.dropLast(keep)
                    held = Array(rest.suffix(keep))
                    rest = []
                }
            } else if let at = Self.find(Self.start, in: rest) {
                keys += Key.decode(Array(rest[..<at]))
                pasted = []
                rest = Array(rest[(at + Self.start.count)...])
            } else {
                // A lone Esc is a key, not the start of a paste: only "ESC [" and more wait.
                let keep = Self.partialSuffix(Self.start, of: rest, atLeast: 2)
                keys += Key.decode(Array(rest.dropLast(keep)))
                held = Array(rest.suffix(keep))
                rest = []
            }
        }
        return keys
    }

    static func find(_ marker: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        return (0...(bytes.count - marker.count)).first { bytes[$0..<($0 + marker.count)].elementsEqual(marker) }
    }

    /// How many bytes at the end of `bytes` begin `marker` (at most its length - 1).
    static func partialSuffix(_ marker: [UInt8], of bytes: [UInt8], atLeast: Int = 1) -> Int {
        guard min(marker.count - 1, bytes.count) >= atLeast else { return 0 }
        for n in stride(from: min(marker.count - 1, bytes.count), through: atLeast, by: -1)
        where bytes.suffix(n).elementsEqual(marker.prefix(n)) {
            return n
        }
        return 0
    }
}
