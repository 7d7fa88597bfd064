import CHiredis
import Foundation

/// Names the calling thread so that `top -H`, `perf` and `/proc/<pid>/task/*/comm` tell the
/// Redis threads apart. Linux keeps at most 15 bytes: `pthread_setname_np` refuses a longer name
/// (ERANGE), and Foundation's `Thread.name` then names nothing, which is what
/// `redis-richpush-api` did. The name is cut to fit, at a character boundary.
enum ThreadName {
    static let maxBytes = 15

    static func setCurrent(_ name: String) {
        let fitted = fitted(name)
        Thread.current.name = fitted
        _ = pthread_setname_np(pthread_self(), fitted)
    }

    /// The name of a connection's thread: `redis:` and the client name without `richpush-`
    /// (`redis:api`, `redis:worker`), cut to 15 bytes.
    static func forConnection(clientName: String?) -> String {
        guard let clientName, !clientName.isEmpty else { return "redis" }
        let short = clientName.hasPrefix("richpush-") ? String(clientName.dropFirst("richpush-".count)) : clientName
        return fitted("redis:" + short)
    }

    static func fitted(_ name: String) -> String {
        var kept = ""
        for character in name where kept.utf8.count + character.utf8.count <= maxBytes {
            kept.append(character)
        }
        return kept
    }

    /// The kernel's name of a thread (for tests).
    static func name(of thread: pthread_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard pthread_getname_np(thread, &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
