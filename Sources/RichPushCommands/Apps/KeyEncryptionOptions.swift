import ArgumentParser
import Foundation
import RichPushApps

/// Where a process gets the key-encryption key that seals app credentials: a file (or the key
/// itself in RICHPUSH_KEK), and during a rotation the previous key(s) it may still open with.
struct KeyEncryptionOptions: ParsableArguments {
    @Option(
        help:
            "File holding the key-encryption key of app credentials, 32 bytes base64 (`richpush apps new-kek`; env RICHPUSH_KEK_FILE, or the key itself in RICHPUSH_KEK)."
    )
    var kekFile: String?
    @Option(help: "A previous key-encryption key still accepted for opening while rotating (repeatable; env RICHPUSH_PREVIOUS_KEK_FILE).")
    var previousKekFile: [String] = []

    /// The ring, or nil when no key was given.
    func ring() throws -> KeyRing? {
        let environment = ProcessInfo.processInfo.environment
        let current: KeyEncryptionKey
        if let file = kekFile ?? environment["RICHPUSH_KEK_FILE"] {
            current = try Self.read(file, flag: "--kek-file")
        } else if let text = environment["RICHPUSH_KEK"] {
            do {
                current = try KeyEncryptionKey(text: text)
            } catch {
                throw CLIError("RICHPUSH_KEK: \(error)")
            }
        } else {
            return nil
        }
        let previousFiles = previousKekFile.isEmpty ? environment["RICHPUSH_PREVIOUS_KEK_FILE"].map { [$0] } ?? [] : previousKekFile
        let previous = try previousFiles.map { try Self.read($0, flag: "--previous-kek-file") }
        return KeyRing(current: current, previous: previous)
    }

    /// The ring, or a message saying how to give one.
    func requiredRing() throws -> KeyRing {
        guard let ring = try ring() else { throw CLIError(AppError.noKeyEncryptionKey.description) }
        return ring
    }

    private static func read(_ file: String, flag: String) throws -> KeyEncryptionKey {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file), (attributes[.size] as? Int ?? 0) <= 1024,
            let text = try? String(contentsOfFile: file, encoding: .utf8)
        else {
            throw CLIError("\(flag) \(file): not a readable file of at most 1 KiB")
        }
        do {
            return try KeyEncryptionKey(text: text)
        } catch {
            throw CLIError("\(flag) \(file): \(error)")
        }
    }
}
