import Foundation
import Hiredis
import RedisTestSupport

/// The ACL that docs/redis-acl.md recommends, read from its one fenced block of `ACL SETUSER`
/// lines, so the test runs what the docs say and the two cannot drift.
struct DocumentedACL {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/redis-acl.md")
    /// The password the docs tell the operator to replace.
    static let placeholder = ">long-random-password"

    /// Each line's words: `ACL SETUSER <user> <rule>…`.
    let lines: [[String]]

    static func load() throws -> DocumentedACL {
        let text = try String(contentsOf: file, encoding: .utf8)
        var blocks: [[String]] = []
        var open: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let block = open { blocks.append(block) }
                open = open == nil ? [] : nil
            } else {
                open?.append(String(line))
            }
        }
        let found = blocks.filter { $0.first?.hasPrefix("ACL SETUSER ") == true }
        guard found.count == 1 else {
            throw RedisServerError("\(file.path) must have one fenced block of ACL SETUSER lines, found \(found.count)")
        }
        let lines = found[0].filter { !$0.isEmpty }.map { $0.split(separator: " ").map(String.init) }
        guard let user = lines.first?.dropFirst(2).first,
            lines.allSatisfy({ $0.count > 3 && $0[0] == "ACL" && $0[1] == "SETUSER" && $0[2] == user })
        else {
            throw RedisServerError("every line of the ACL block must be `ACL SETUSER <one user> <rules>`")
        }
        guard lines[0].contains(placeholder) else { throw RedisServerError("the ACL block must set the password \(placeholder)") }
        return DocumentedACL(lines: lines)
    }

    var user: String { lines[0][2] }

    /// The key prefix the user may touch: its one key pattern `~<prefix>:*`.
    var prefix: String {
        get throws {
            let patterns = lines.flatMap { $0 }.filter { $0.hasPrefix("~") }
            guard patterns.count == 1, let pattern = patterns.first, pattern.hasSuffix(":*") else {
                throw RedisServerError("expected one key pattern ~<prefix>:*, found \(patterns)")
            }
            return String(pattern.dropFirst().dropLast(2))
        }
    }

    /// The commands granted (`+cmd`, `+cmd|subcommand`), lower-cased.
    var granted: Set<String> {
        Set(lines.flatMap { $0.dropFirst(3) }.filter { $0.hasPrefix("+") }.map { $0.dropFirst().lowercased() })
    }

    /// The block as commands, with `password` in place of the placeholder and the rules in
    /// `leftOut` (e.g. `+spublish`) dropped.
    func commands(password: String, leftOut: Set<String> = []) -> [RedisCommand] {
        lines.map { words in
            let rules = words.dropFirst(2).filter { !leftOut.contains($0) }.map { $0 == Self.placeholder ? ">" + password : $0 }
            return RedisCommand(words[0], arguments: (words[1...1] + rules).map { $0 as any RedisArgument })
        }
    }

    /// Applies the block on `server` as its default user, in one MULTI…EXEC as the docs say
    /// (a live user never sees the moment between `reset` and the grants).
    func apply(on server: RedisServer, password: String, leftOut: Set<String> = []) async throws {
        let connection = try await RedisConnection.connect(configuration: server.configuration)
        do {
            for reply in try await connection.transaction(commands(password: password, leftOut: leftOut)) { try reply.throwingError() }
            await connection.close()
        } catch {
            await connection.close()
            throw error
        }
    }

    /// A URL that connects as the ACL user.
    func url(_ server: RedisServer, password: String, database: Int = 0) -> String {
        "redis://\(user):\(password)@127.0.0.1:\(server.port)/\(database)"
    }

    /// The settings of a connection as the ACL user.
    func configuration(_ server: RedisServer, password: String) -> RedisConfiguration {
        var configuration = server.configuration
        configuration.username = user
        configuration.password = password
        return configuration
    }
}

extension RedisServer {
    /// Runs one command as the default user on a fresh connection.
    @discardableResult
    func probe(_ command: RedisCommand) async throws -> RedisValue {
        let connection = try await RedisConnection.connect(configuration: configuration)
        do {
            let reply = try await connection.send(command)
            await connection.close()
            return reply
        } catch {
            await connection.close()
            throw error
        }
    }

    /// The server's `ACL LOG`: every denial (command, key, channel, auth), each as its fields.
    func aclLog() async throws -> [[String: String]] {
        let entries = try await probe(RedisCommand("ACL", "LOG")).array ?? []
        return entries.map { entry in
            let flat = entry.array ?? []
            var fields: [String: String] = [:]
            for index in stride(from: 0, to: flat.count - 1, by: 2) {
                if let name = flat[index].string { fields[name] = flat[index + 1].string ?? "\(flat[index + 1])" }
            }
            return fields
        }
    }

    /// The commands (`name` or `name|subcommand`, lower-cased) Redis ran at least once since
    /// the last `CONFIG RESETSTAT`, from every client, Lua scripts' calls included.
    func commandsRun() async throws -> Set<String> {
        let info = try await probe(RedisCommand("INFO", "commandstats")).string ?? ""
        var run: Set<String> = []
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            let parts = line.dropFirst("cmdstat_".count).split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let calls = parts[1].split(separator: ",").first { $0.hasPrefix("calls=") }.flatMap { Int($0.dropFirst("calls=".count)) } ?? 0
            if calls > 0 { run.insert(parts[0].lowercased()) }
        }
        return run
    }
}
