import Foundation

/// The dev server's outgoing mail: each message is one owner-only file in a directory the
/// operator chose (`--mail-dir`), the way a local Supabase keeps mail in Inbucket. There is no
/// SMTP; without a directory the server sends no mail, and routes that need it say so.
struct DevMailbox: Sendable {
    let directory: URL

    /// Writes the message as `<time>-<random>.txt` (0600, in a 0700 directory), whole or not at all.
    func send(to recipient: String, subject: String, body: String, now: Date) throws {
        let files = FileManager.default
        try files.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let stamp = Int64(now.timeIntervalSince1970 * 1000)
        let name = "\(stamp)-\(UUID().uuidString.lowercased().prefix(8)).txt"
        let text = "To: \(recipient)\nSubject: \(subject)\n\n\(body)\n"
        let temporary = directory.appendingPathComponent(".\(name).partial")
        guard
            files.createFile(atPath: temporary.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        try files.moveItem(at: temporary, to: directory.appendingPathComponent(name))
    }
}
