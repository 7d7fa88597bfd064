import Foundation
import Hiredis
package import RichPushCore

/// What the console's searches read besides records: bounds and indexes that exist already (the
/// id sequence, the creators' indexes), each batch in one pipelined round trip. There is no
/// index of an app's notifications by time: ids grow (one deployment-wide sequence, reserved in
/// blocks per API process) and a search reads them newest first.
extension RedisNotificationStore {
    /// Above every notification id given so far (of any app): where a newest-first scan starts.
    package func idCeiling() async throws -> Int {
        let sequence = try await redis.send("GET", keys.notificationSequence).int ?? 0
        return (sequence + 1) * keys.partitions
    }

    /// Up to `limit` ids of `user`'s notifications below `before`, newest first, from every
    /// partition's creator index in one round trip (records may have expired since).
    package func createdIDs(by user: String, before: Int, limit: Int) async throws -> [Int] {
        let replies = try await redis.sendAll(
            (0..<keys.partitions).map {
                RedisCommand("ZREVRANGEBYSCORE", keys.inPartition($0).created(by: user), "(\(before)", "-inf", "LIMIT", 0, limit)
            })
        return Array(replies.flatMap { ($0.array ?? []).compactMap(\.int) }.sorted(by: >).prefix(limit))
    }

    /// Each notification's state (``StoredStatus``: derived from the state stored and the counters
    /// that imply later ones, in the record), one pipelined HMGET per id; ids with no status are
    /// left out.
    package func states(ids: [Int]) async throws -> [Int: DeliveryState] {
        guard !ids.isEmpty else { return [:] }
        let names = StoredStatus.derivingFields
        let replies = try await redis.sendAll(ids.map { RedisCommand("HMGET", arguments: [keys.notification($0)] + names) })
        var states: [Int: DeliveryState] = [:]
        for (index, id) in ids.enumerated() {
            let stored = StoredStatus(record: StoredStatus.fields(names, of: replies[index]))
            if stored.state != nil { states[id] = stored.derived }
        }
        return states
    }

    /// One device's entry in each notification's ledger (or devices hash), by id: what it got and
    /// when, as the status shows it; notifications that never addressed it are left out. Two
    /// pipelined HGETs per id, in one round trip.
    package func entries(of installation: String, in ids: [Int]) async throws -> [Int: NotificationStatus.Device] {
        guard !ids.isEmpty else { return [:] }
        let replies = try await redis.sendAll(
            ids.flatMap {
                [RedisCommand("HGET", keys.ledger($0), installation), RedisCommand("HGET", keys.devices($0), installation)]
            })
        var found: [Int: NotificationStatus.Device] = [:]
        for (index, id) in ids.enumerated() {
            let ledger = replies[2 * index].bytes
            // A ledger value with an entry (`R{…}`), else the devices hash's; a lease or bare mark
            // alone says it was addressed, with nothing recorded yet.
            let entry =
                ledger.flatMap { $0.count > 1 && $0[1] == UInt8(ascii: "{") ? Array($0.dropFirst()) : nil } ?? replies[2 * index + 1].bytes
            if let entry, let device = Self.device(installation, entry: entry) {
                found[id] = device
            } else if let ledger, let mark = ledger.first {
                found[id] = NotificationStatus.Device(
                    installation: installation, state: mark == LedgerMark.leased.byte ? "sending" : "addressed")
            }
        }
        return found
    }

    /// Of `ids`, those addressed to `installation` (its ledger has a field for it) that it has not
    /// fetched (it is not in the notification's fetchers): two commands per id, one round trip.
    package func unfetched(by installation: String, among ids: [Int]) async throws -> [Int] {
        guard !ids.isEmpty else { return [] }
        let replies = try await redis.sendAll(
            ids.flatMap {
                [
                    RedisCommand("HEXISTS", keys.ledger($0), installation),
                    RedisCommand("SISMEMBER", keys.fetchedBy($0), "i:\(installation)"),
                ]
            })
        return ids.indices.filter { replies[2 * $0].int == 1 && replies[2 * $0 + 1].int != 1 }.map { ids[$0] }
    }

    /// Which of `installations` fetched notification `id`'s payload (first fetches are kept per
    /// device, without their time before `fetchedAt` was recorded): one SMISMEMBER.
    package func fetched(id: Int, by installations: [String]) async throws -> Set<String> {
        guard !installations.isEmpty else { return [] }
        var command = RedisCommand("SMISMEMBER", keys.fetchedBy(id))
        for installation in installations { command.append("i:\(installation)") }
        let reply = try await redis.send(command).array ?? []
        return Set(zip(installations, reply).filter { $0.1.int == 1 }.map(\.0))
    }

    /// A device's entry as the status reads it.
    static func device(_ installation: String, entry: [UInt8]) -> NotificationStatus.Device? {
        guard let info = try? JSONDecoder().decode([String: String].self, from: Data(entry)) else { return nil }
        let times = info.compactMapValues(Int64.init).filter { $0.key == "at" || $0.key.hasSuffix("At") }
        return NotificationStatus.Device(
            installation: installation, state: info["state"] ?? "sent", adapterID: info["adapterID"], error: info["error"],
            template: info["template"], locale: info["locale"], strategy: info["strategy"], times: times.isEmpty ? nil : times)
    }
}
