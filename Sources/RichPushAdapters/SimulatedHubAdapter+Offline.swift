import RichPushCore

extension SimulatedHubAdapter {
    /// A push that reached no one as the hub's script takes it: its keys, channel and envelope
    /// (as first published), how long it is held and under which field, and the most held of its kind.
    func item(
        for push: OutgoingPush, address: String, bucket: Int, channel: String, envelope: [UInt8], now: Int64
    ) -> OfflineStore.PublishItem {
        let collapses = !push.rendered.collapseID.isEmpty
        // Held until the push's deadline (creation + the sender's ttl, in ms), never longer or
        // shorter, as APNs and FCM do.
        let holdMilliseconds = Int64(holdFor.milliseconds)
        let deadline = push.rendered.deadline
        let heldFor = deadline > 0 ? max(1, min(holdMilliseconds, deadline - now)) : holdMilliseconds
        let limits = OfflineStore.Limits.of(push.installation.platform)
        // Without a collapse id each push is held on its own, under a field of its own.
        let field = collapses ? push.rendered.collapseID : "\n\(push.notification).\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        return OfflineStore.PublishItem(
            held: store.key(address, bucket: bucket), expiry: store.expiryKey(bucket: bucket),
            channel: channel, envelope: envelope, hold: heldFor,
            field: field, handle: address, most: collapses ? limits.collapseIDs : limits.messages)
    }

    /// The pushes whose first publish reached no one (`items`, of the batch's pushes at
    /// `indexes`) through the publish-or-hold script: one call for all of them (on a cluster, one
    /// per bucket: a slot); each one's outcome (sent, held or failed) into `outcomes`.
    func publishOrHold(
        _ items: [OfflineStore.PublishItem], at indexes: [Int], buckets: [Int], ids: [String], now: Int64,
        into outcomes: inout [PushOutcome]
    ) async throws {
        var groups: [Int: [Int]] = [:]
        for position in items.indices { groups[callPerBucket ? buckets[indexes[position]] : 0, default: []].append(position) }
        var calls: [OfflineStore.PublishCall] = []
        var order: [[Int]] = []
        for positions in groups.values {
            for start in stride(from: 0, to: positions.count, by: OfflineStore.pushesPerCall) {
                let chunk = Array(positions[start..<min(start + OfflineStore.pushesPerCall, positions.count)])
                calls.append(OfflineStore.PublishCall(now: now, pushes: chunk.map { items[$0] }))
                order.append(chunk.map { indexes[$0] })
            }
        }
        let replies = try await redis.run(OfflineStore.publishOrHold, calls: calls)
        for (chunk, reply) in zip(order, replies) {
            let receivers = reply.errorMessage == nil ? reply.array ?? [] : []
            for (position, index) in chunk.enumerated() {
                let id = ids[index]
                if let message = reply.errorMessage {
                    outcomes[index] = .failed(reason: message, retryable: true)
                } else if position < receivers.count {
                    outcomes[index] = (receivers[position].int ?? 0) > 0 ? .sent(adapterID: id) : .held(adapterID: id)
                } else {
                    outcomes[index] = .failed(reason: "Redis answered \(receivers.count) of \(chunk.count) pushes", retryable: true)
                }
            }
        }
    }
}
