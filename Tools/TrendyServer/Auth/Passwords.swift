import Dispatch
import HummingbirdBcrypt

/// bcrypt on a private queue, so slow hashing never occupies a cooperative thread.
struct Passwords: Sendable {
    let cost: UInt8
    static let queue = DispatchQueue(label: "trendy.server.bcrypt", attributes: .concurrent)

    func hash(_ password: String) async -> String {
        await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: Bcrypt.hash(password, cost: cost)) }
        }
    }

    func verify(_ password: String, hash: String) async -> Bool {
        await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: Bcrypt.verify(password, hash: hash)) }
        }
    }

    /// A hash to compare against when the user does not exist, so unknown users and wrong
    /// passwords take the same time.
    static let dummyHash = "$2b$04$abcdefghijklmnopqrstuu5Pq0m1bI0f7QHh1C9s2mVkH0eWlL7bW"
}
