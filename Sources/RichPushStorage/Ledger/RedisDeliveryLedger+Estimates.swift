import Hiredis
package import RichPushCore

extension RedisDeliveryLedger {
    /// One GET per installation, pipelined; then, for those with a last silent push, whether
    /// the device fetched it (one SISMEMBER each, pipelined).
    package func deliveryEstimates(of installations: [String]) async throws -> [String: DeviceEstimate] {
        guard !installations.isEmpty else { return [:] }
        let replies = try await redis.sendAll(installations.map { RedisCommand("GET", keys.deliveryEstimate($0)) })
        var estimates: [String: DeviceEstimate] = [:]
        for (installation, reply) in zip(installations, replies) {
            if let text = reply.string, let estimate = DeviceEstimate(packed: text) { estimates[installation] = estimate }
        }
        let asked = estimates.compactMap { installation, estimate in estimate.lastSilent.map { (installation, $0) } }
        guard !asked.isEmpty else { return estimates }
        let answers = try await redis.sendAll(asked.map { RedisCommand("SISMEMBER", keys.fetchedBy($0.1), "i:\($0.0)") })
        for ((installation, _), answer) in zip(asked, answers) { estimates[installation]?.answered = answer.int == 1 }
        return estimates
    }

    package func saveDeliveryEstimates(_ estimates: [String: DeviceEstimate]) async throws {
        guard !estimates.isEmpty else { return }
        let seconds = DeviceEstimate.lifetime.components.seconds
        try await redis.sendAll(estimates.map { RedisCommand("SET", keys.deliveryEstimate($0.key), $0.value.packed, "EX", seconds) })
    }
}
