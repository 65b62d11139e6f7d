import Foundation

/// The mail the dev server wrote to its `--mail-dir`, as tests read it.
public enum DevMail {
    /// One written message.
    public struct Message: Sendable, Equatable {
        /// The file's permissions.
        public var mode: Int
        /// The reauthentication code it carries, if any.
        public var code: String?
    }

    /// Every message in `directory`, oldest first (files being written, `.…partial`, left out).
    public static func messages(in directory: URL) throws -> [Message] {
        let files = FileManager.default
        let names = try files.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { name in
            let file = directory.appendingPathComponent(name)
            let mode = try files.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int ?? -1
            let text = try String(contentsOf: file, encoding: .utf8)
            let line = text.split(separator: "\n").first { $0.hasPrefix("Enter the code: ") }
            return Message(mode: mode, code: line.map { String($0.dropFirst("Enter the code: ".count)) })
        }
    }
}
