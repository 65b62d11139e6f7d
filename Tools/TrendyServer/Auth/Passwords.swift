import Dispatch
import HummingbirdBcrypt
import Synchronization

/// bcrypt on a private queue, so slow hashing never occupies a cooperative thread.
struct Passwords: Sendable {
    let cost: UInt8
    static let queue = DispatchQueue(label: "trendy.server.bcrypt", attributes: .concurrent)
    /// bcrypt reads at most this many bytes of a password.
    static let maximumBytes = 72
    /// A hash of a random password with the configured cost, compared against when the user
    /// does not exist, so unknown users and wrong passwords take the same time. Made once, off
    /// the start-up path (the first unknown-user login waits for it).
    let dummy: DummyHash

    init(cost: UInt8) {
        self.cost = cost
        self.dummy = DummyHash(cost: cost)
    }

    /// Compares two secrets' text in time that depends only on their lengths.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    func hash(_ password: String) async -> String {
        await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: Bcrypt.hash(password, cost: cost)) }
        }
    }

    /// Whether `password` matches `hash`; with no hash (an unknown user) the same work is done
    /// against the dummy and the answer is false. A password over 72 bytes never matches.
    func verify(_ password: String, hash: String?) async -> Bool {
        let against: String
        if let hash { against = hash } else { against = await dummy.value() }
        let matches = await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: Bcrypt.verify(password, hash: against)) }
        }
        return matches && hash != nil && password.utf8.count <= Self.maximumBytes
    }
}

/// The dummy hash, computed on the bcrypt queue at first need (or started early by ``warm()``).
final class DummyHash: Sendable {
    let cost: UInt8
    let state = Mutex<Task<String, Never>?>(nil)

    init(cost: UInt8) { self.cost = cost }

    func value() async -> String {
        let cost = self.cost
        let task = state.withLock { current in
            if let current { return current }
            let made = Task {
                await withCheckedContinuation { continuation in
                    Passwords.queue.async {
                        continuation.resume(returning: Bcrypt.hash(AuthRoutes.randomToken(), cost: cost))
                    }
                }
            }
            current = made
            return made
        }
        return await task.value
    }
}
